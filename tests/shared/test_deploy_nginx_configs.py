"""The shipped nginx site configurations pass `nginx -t`."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SITES = sorted((REPO_ROOT / "deploy" / "nginx").glob("*.conf"))


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "site.pem", tmp_path / "site.key"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-subj", "/CN=test.example", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        command,
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.mark.parametrize("site", SITES, ids=[site.name for site in SITES])
def test_the_site_config_passes_nginx_t(site: Path, tmp_path: Path, certificate):
    nginx = shutil.which("nginx")
    assert nginx, "nginx is not installed (.ci/run installs it)"
    cert, key = certificate
    text = site.read_text()
    # Machine paths of a production host are swapped for the test's own folder.
    text = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", text)
    text = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", text)
    text = re.sub(r"proxy_cache_path\s+\S+", f"proxy_cache_path {tmp_path / 'cache'}", text)
    (tmp_path / site.name).write_text(text)
    main = tmp_path / "nginx.conf"
    main.write_text(
        f"pid {tmp_path / 'nginx.pid'};\nerror_log {tmp_path / 'error.log'};\n"
        "events {}\nhttp {\n"
        f"  access_log off;\n  client_body_temp_path {tmp_path / 'body'};\n"
        f"  proxy_temp_path {tmp_path / 'proxy'};\n"
        f"  include {tmp_path / site.name};\n}}\n"
    )

    result = subprocess.run([nginx, "-t", "-c", str(main)], capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr
