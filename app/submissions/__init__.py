"""Submissions: what a submitter asked for, a template or their own script, as one JobRequest."""
