"""Usage accounting: ingestion from the scheduler, daily rollups, reports and efficiency."""
