"""The repositories Tributary has indexed, as a whole: kept up to date and served.

``manage`` adds, updates, lists and removes a repository's code index and task
history together; ``builtins`` derives, from what is indexed, the built-in ``files``
and ``tasks`` MCP servers the engine adds to the config. Both sit above the code
index, the task history and the config, and only the engine's faces import them.
"""
