"""Operations without a web framework: JSON logs, Prometheus metrics, process figures."""
