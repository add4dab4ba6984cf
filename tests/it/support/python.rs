//! Python tools the suite checks clarion with, each in its own virtual
//! environment under target/, made from a pinned requirements file by
//! `.ci/run` (or here, on first use). Under `CI=true` a tool that cannot
//! be installed is a failure; elsewhere its tests skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::outside::{root, under_ci};

/// One tool: where its environment lives and how to know it is there.
pub struct PythonTool {
    /// What the skip message and the CI failure call it.
    pub name: &'static str,
    /// An interpreter that already has it (set by `.ci/run`).
    pub env_var: &'static str,
    /// The virtual environment, under the repository root.
    pub venv: &'static str,
    /// The pinned requirements, under the repository root.
    pub requirements: &'static str,
    /// A module whose import proves the tool installed.
    pub module: &'static str,
}

/// The official Python MCP client (WIRE-4).
pub const MCP_CLIENT: PythonTool = PythonTool {
    name: "the Python MCP client",
    env_var: "CLARION_MCP_PYTHON",
    venv: "target/mcp-venv",
    requirements: "tests/mcp_client/requirements.txt",
    module: "mcp.client.stdio",
};

/// Schemathesis and openapi-spec-validator (HTTP-7).
pub const CONTRACT_CHECKERS: PythonTool = PythonTool {
    name: "Schemathesis and openapi-spec-validator",
    env_var: "CLARION_CONTRACT_PYTHON",
    venv: "target/contract-venv",
    requirements: "tests/contract/requirements.txt",
    module: "schemathesis, openapi_spec_validator",
};

/// The Standard Webhooks reference library, in the test receiver
/// (`tests/webhooks/receiver.py`, HOOK-3).
pub const WEBHOOK_VERIFIER: PythonTool = PythonTool {
    name: "the Standard Webhooks reference library",
    env_var: "CLARION_WEBHOOKS_PYTHON",
    venv: "target/webhooks-venv",
    requirements: "tests/webhooks/requirements.txt",
    module: "standardwebhooks",
};

/// aiosmtpd, the SMTP server of the mail tests
/// (`tests/mail/smtp_server.py`, MAIL-1).
pub const SMTP_SERVER: PythonTool = PythonTool {
    name: "aiosmtpd",
    env_var: "CLARION_MAIL_PYTHON",
    venv: "target/mail-venv",
    requirements: "tests/mail/requirements.txt",
    module: "aiosmtpd",
};

/// pytest and mypy for the clarion Python package (`python/`, PY-5), on
/// the lowest CPython it supports.
pub const PY_PACKAGE: PythonTool = PythonTool {
    name: "pytest and mypy for the Python package",
    env_var: "CLARION_PY_PYTHON",
    venv: "target/py-venv",
    requirements: "python/requirements-dev.txt",
    module: "pytest, mypy",
};

impl PythonTool {
    /// The interpreter that has the tool; `None` (skip) only outside CI.
    pub fn python(&'static self, cell: &'static OnceLock<Option<PathBuf>>) -> Option<PathBuf> {
        cell.get_or_init(|| self.find()).clone()
    }

    fn find(&self) -> Option<PathBuf> {
        if let Ok(python) = std::env::var(self.env_var) {
            return Some(PathBuf::from(python));
        }
        let venv = root().join(self.venv);
        let python = venv.join("bin/python");
        if !self.installed(&python) {
            let _ = Command::new("python3")
                .arg("-m")
                .arg("venv")
                .arg(&venv)
                .status();
            let _ = Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "-r"])
                .arg(root().join(self.requirements))
                .status();
        }
        if self.installed(&python) {
            Some(python)
        } else if under_ci() {
            panic!("{} is not installable under CI=true", self.name)
        } else {
            eprintln!("skipping: {} could not be installed", self.name);
            None
        }
    }

    fn installed(&self, python: &Path) -> bool {
        Command::new(python)
            .args(["-c", &format!("import {}", self.module)])
            .status()
            .is_ok_and(|s| s.success())
    }
}
