import os
import sys
import tempfile
from pathlib import Path

# The harness module sits beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))
# Keep the content-hash cache of test runs out of the user's cache directory.
os.environ.setdefault("SAU_VERIFY_CACHE_DIR", tempfile.mkdtemp(prefix="sau-verify-test-cache-"))
