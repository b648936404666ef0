"""SQLAlchemy models, one module per aggregate; app/models/catalogue.py gathers them all."""
