import atexit
import os
import shutil
import tempfile

# Tests run on CPU with float32 defaults, whatever machine they are on, so numbers agree across runs.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# One JAX compilation cache for the session, shared with the verification workers the tests start (they inherit
# the environment): `jaxfix verify` on the corpus then reuses what tests/test_corpus.py compiled (an unrolled
# 64-step loop takes ~15 s to compile on a small CPU). Removed at exit; it changes no result.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="jaxfix-tests-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "1")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
