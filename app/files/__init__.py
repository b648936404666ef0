"""Files on the clusters, browsed and changed as the user over SFTP."""
