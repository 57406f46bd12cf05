"""The GitHub face: pull-request comment, annotations, job summary and outputs."""
