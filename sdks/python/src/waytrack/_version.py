# Versioned with the server (server/package.json); the User-Agent reports it.
__version__ = "0.1.0"
