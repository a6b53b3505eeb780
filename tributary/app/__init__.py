"""Tributary's desktop application: the only package that imports Qt.

Everything here renders engine outcome objects (``tributary.engine.model``) and awaits engine
coroutines on a qasync loop; no module imports torch or the embedding stack.
"""
