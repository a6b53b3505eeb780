"""What a query is before any source sees it: checked, its filters parsed, its form.

``check`` refuses or cuts a bad query and moves the filters written in it
(``syntax``) to the request; ``kinds`` classifies its form and the names it looks up;
``languages`` names a file's language for ``lang:``. The package imports only the
data model and the errors, so routing, the config, the code index and the pipeline
can all build on it.
"""
