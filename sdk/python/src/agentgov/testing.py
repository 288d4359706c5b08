"""A real agentgov server for tests: `LocalServer` runs the `agentgov` binary in embedded mode
(SQLite in a throwaway directory, a free loopback port, an operator key of its own) and
creates tenants on it. For the SDK's own tests, the console's browser tests, and anyone's
integration tests of an agent against a real agentgov.

    server = LocalServer("/path/to/agentgov")
    server.start()
    tenant = server.create_tenant("acme")      # {"api_key", "email", "password", "id"}
    ...
    server.stop()
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

__all__ = ["LocalServer"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """One agentgov process; `stop()` and `start()` again on the same port and data."""

    def __init__(self, binary: str | Path, *, env: dict[str, str] | None = None) -> None:
        self.binary = Path(binary)
        self.dir = Path(tempfile.mkdtemp(prefix="agentgov-test-"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin_key = "test-admin-" + secrets.token_hex(16)
        self.extra_env = dict(env or {})
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    def start(self) -> None:
        # The server refuses AGENTGOV_ variables it does not know (a test runner's own).
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTGOV_")}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        env |= {
            "AGENTGOV_DATA_DIR": str(self.dir),
            "AGENTGOV_BIND": f"127.0.0.1:{self.port}",
            "AGENTGOV_ADMIN_KEY": self.admin_key,
            "AGENTGOV_LOG_LEVEL": "warn",
            "AGENTGOV_GUARD_ENCODER": "off",
            **self.extra_env,
        }
        # Open for the process's lifetime: closed by `stop`.
        self._log = open(self.dir / "server.log", "ab")  # noqa: SIM115
        self.process = subprocess.Popen([str(self.binary)], env=env, cwd=self.dir, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"agentgov exited at start-up: {(self.dir / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/api/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError("agentgov did not answer /health within 60 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                # A graceful shutdown waits for open connections (a browser's feed socket).
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def remove(self) -> None:
        """Stops the server and deletes its data."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def create_tenant(self, name: str, *, agent: str | None = None, policy: str | None = None) -> dict[str, str]:
        """A new tenant (its name made unique) and its admin: `id`, `api_key`, `email`,
        `password`; with `agent`, an agent of that name registered (`agent_id`); with
        `policy`, that Rego module created and enabled (by the admin)."""
        email = f"admin-{uuid.uuid4().hex[:8]}@agentgov.test"
        password = "test-password-" + secrets.token_hex(8)
        r = httpx.post(
            f"{self.url}/api/v1/tenants",
            json={"name": f"{name}-{uuid.uuid4().hex[:6]}", "admin_email": email, "admin_password": password},
            headers={"X-Admin-Key": self.admin_key},
        )
        r.raise_for_status()
        body = r.json()
        out = {"id": body["tenant"]["id"], "api_key": body["api_key"], "email": email, "password": password}
        key = {"X-API-Key": out["api_key"]}
        if agent is not None:
            registered = httpx.post(
                f"{self.url}/api/v1/agents/register",
                json={"name": agent, "type": "llm", "capabilities": ["tools"]},
                headers=key,
            )
            registered.raise_for_status()
            out["agent_id"] = registered.json()["id"]
        if policy is not None:
            login = httpx.post(f"{self.url}/api/v1/auth/login", json={"email": email, "password": password})
            login.raise_for_status()
            created = httpx.post(
                f"{self.url}/api/v1/policies",
                json={"name": f"{name} policy", "rego": policy},
                headers={"Authorization": f"Bearer {login.json()['access_token']}"},
            )
            created.raise_for_status()
        return out
