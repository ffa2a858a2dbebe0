#!/usr/bin/env node
// Makes a fresh clone runnable: installs dependencies when they are missing or stale, builds the web console
// (--web) when its build was made from other sources, and the server (--server) when its sources are newer than its
// build. Run before `npm start` and `npm test`.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mtime, serverBuildIsStale } from '../packages/server/scripts/build-state.mjs';
import { webBuildIsStale } from '../packages/web/sources-digest.mjs';
import { quietRun } from './quiet-run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const wantWeb = process.argv.includes('--web');
const wantServer = process.argv.includes('--server');

/** One line per step; a step's own output only when it fails (see quiet-run.mjs). */
function run(cmd, note) {
  try {
    quietRun(cmd, { cwd: root, note });
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}

const installed = join(root, 'node_modules', '.package-lock.json');
const sqliteBinding = join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
if (!existsSync(installed) || mtime(join(root, 'package-lock.json')) > mtime(installed)) {
  // Not `npm ci`: the lockfile can only list the platform packages the registry serves (a mirror may
  // carry just this platform's builds of e.g. @biomejs/cli-*), and `npm ci` rejects such a lockfile as
  // out of sync. `npm install --no-save` installs the locked versions and leaves the lockfile alone.
  run('npm install --no-audit --no-fund --no-save', 'installing dependencies (npm install)');
}
if (!existsSync(sqliteBinding)) run('npm rebuild better-sqlite3', 'building the SQLite driver');

// The web build records a digest of the sources it was made from (packages/web/sources-digest.mjs).
if (wantWeb && webBuildIsStale()) run('npm run build -w @signalbox/web', 'building the web console');

if (wantServer && serverBuildIsStale()) run('npm run build -w @signalbox/server', 'building the server');

const has = (cmd) => {
  try {
    execSync(`command -v ${cmd}`, { stdio: 'ignore', shell: '/bin/sh' });
    return true;
  } catch {
    return false;
  }
};

// The console runs every task in a bubblewrap sandbox (SIGNALBOX_TASK_SANDBOX): install it when missing and we may
// (root on a Debian-like machine), as the tests do; otherwise the server says at start that tasks run unconfined.
if (wantServer && !has('bwrap') && process.getuid?.() === 0 && has('apt-get')) {
  run(
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap',
    'installing bubblewrap (the task sandbox)',
  );
}

// `npm test` drives real tools: ansible-playbook, Debian's Chromium, sshd, slapd and bubblewrap. Install them when
// missing and we may (root on a Debian-like machine); otherwise say what is missing and let the tests that need
// them fail.
if (process.argv.includes('--system')) {
  const missing = [];
  if (!has('bwrap')) missing.push('bubblewrap');
  if (!has('chromium')) missing.push('chromium');
  if (!has('ansible-playbook')) missing.push('ansible-core');
  if (!has('ssh-agent')) missing.push('openssh-client');
  if (!existsSync('/usr/sbin/sshd')) missing.push('openssh-server');
  if (!existsSync('/usr/sbin/slapd')) missing.push('slapd');
  if (!has('ldapadd')) missing.push('ldap-utils');
  if (!has('openssl')) missing.push('openssl');
  if (missing.length > 0) {
    if (process.getuid?.() === 0 && has('apt-get')) {
      run(
        `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing.join(' ')}`,
        `installing ${missing.join(', ')}`,
      );
    } else {
      console.warn(`[bootstrap] missing system packages for the full test suite: ${missing.join(', ')}`);
    }
  }
}
