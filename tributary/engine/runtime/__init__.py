"""The processes Tributary runs in and starts: how they start, stop, hold memory and load.

``spawn`` starts Tributary's own modules as subprocesses (also from a frozen bundle);
``shutdown`` turns the stop signals into a clean close; ``heap`` keeps the garbage
collector's full passes short once a process has loaded; ``admission`` bounds how
many searches an engine runs at once. Each is a leaf: it imports nothing of the
engine but its errors.
"""
