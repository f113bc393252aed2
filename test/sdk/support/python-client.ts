import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { KEYS, type TestService } from '../../support/service.js';

/**
 * Runs the official Python client (`dune-client`, kept unmodified in ../shared/clients/python)
 * with Debian's interpreter and packages, as ../shared/clients/README.md shows. A script ends
 * by printing one JSON value on its last line, which the test gets back.
 */

const run = promisify(execFile);

export const PYTHON = '/usr/bin/python3';
export const CLIENT_PATH = path.resolve(import.meta.dirname, '../../../../shared/clients/python');

const PRELUDE = `
import importlib.metadata  # the client reads its version through it without importing it
import io, json, os, sys
from dune_client.client import DuneClient
from dune_client.models import QueryFailedError
from dune_client.query import QueryBase
from dune_client.types import QueryParameter

def client(name):
    return DuneClient(os.environ["KEY_" + name.upper()], base_url=os.environ["BASE_URL"], request_timeout=60)

alice, bob, admin = client("alice"), client("bob"), client("admin")
POLL = 0.02  # seconds between status requests: the clients' poll interval is a parameter

def status_of(error):
    return getattr(getattr(error, "response", None), "status_code", None)
`;

/** Throws, saying where the client is expected, when `dir` does not hold it. */
export function checkClientPath(dir: string): void {
  if (!fs.existsSync(path.join(dir, 'dune_client'))) {
    throw new Error(
      `the official Python client is expected in ${dir} (../shared/clients/python beside this checkout); these tests run it unmodified`,
    );
  }
}

/** Runs `script` (after the prelude) and returns the JSON it printed last. */
export async function runPython<T = unknown>(service: TestService, script: string): Promise<T> {
  checkClientPath(CLIENT_PATH);
  const { stdout } = await run(PYTHON, ['-c', `${PRELUDE}\n${script}`], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PYTHONPATH: CLIENT_PATH,
      PYTHONDONTWRITEBYTECODE: '1',
      BASE_URL: service.url,
      KEY_ALICE: KEYS.alice,
      KEY_BOB: KEYS.bob,
      KEY_ADMIN: KEYS.admin,
    },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`the Python client failed: ${error.stderr || error.message}`);
  });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] as string) as T;
}
