"""The folder `jaxfix record` puts first on PYTHONPATH: its sitecustomize.py records call signatures. Nothing
imports it as a package; it is one only so that it is installed with jaxfix."""
