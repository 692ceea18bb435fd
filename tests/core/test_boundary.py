import subprocess
import sys


def test_core_imports_no_web_db_or_queue_code():
    code = (
        "import sys, foldwise.core, foldwise.bench.cli;"
        "bad = [m for m in ('fastapi', 'sqlalchemy', 'huey', 'redis', 'starlette', 'alembic')"
        " if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
