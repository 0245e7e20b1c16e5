"""The shipped nginx site configurations pass `nginx -t`, each alone and both in one http {}
block, as on a host that serves both services."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SITES = sorted((REPO_ROOT / "deploy" / "nginx").glob("*.conf"))


@pytest.fixture
def nginx() -> str:
    binary = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is not installed (.ci/run installs it)")
        pytest.skip("nginx is not installed")
    return binary


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "site.pem", tmp_path / "site.key"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-subj", "/CN=test.example", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(command, check=True, capture_output=True)
    return cert, key


def _with_test_paths(site: Path, folder: Path, certificate: tuple[Path, Path]) -> Path:
    """The site with the machine paths of a production host swapped for the test's folder."""
    cert, key = certificate
    text = site.read_text()
    text = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", text)
    text = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", text)
    text = re.sub(r"proxy_cache_path\s+\S+", f"proxy_cache_path {folder / site.stem}", text)
    text = re.sub(r"access_log\s+/\S+/", f"access_log {folder}/", text)
    copy = folder / site.name
    copy.write_text(text)
    return copy


def _nginx_t(nginx: str, folder: Path, sites: list[Path]) -> subprocess.CompletedProcess:
    includes = "".join(f"  include {site};\n" for site in sites)
    main = folder / "nginx.conf"
    main.write_text(
        f"pid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'};\n"
        "events {}\nhttp {\n"
        f"  access_log off;\n  client_body_temp_path {folder / 'body'};\n"
        f"  proxy_temp_path {folder / 'proxy'};\n{includes}}}\n"
    )
    return subprocess.run(
        [nginx, "-t", "-c", str(main), "-e", str(folder / "error.log")],
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("site", SITES, ids=[site.name for site in SITES])
def test_the_site_config_passes_nginx_t(site: Path, tmp_path: Path, nginx: str, certificate):
    result = _nginx_t(nginx, tmp_path, [_with_test_paths(site, tmp_path, certificate)])

    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr


def test_both_sites_load_into_one_http_block(tmp_path: Path, nginx: str, certificate):
    # Zones, upstreams, maps and log formats are http-wide names: the sites must not share one.
    sites = [_with_test_paths(site, tmp_path, certificate) for site in SITES]

    result = _nginx_t(nginx, tmp_path, sites)

    assert [site.name for site in SITES] == ["compliance.conf", "news.conf"]
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr
