#!/usr/bin/env node
import path from 'node:path';

import { Command, CommanderError, Option } from 'commander';

import { ChromiumNotFoundError } from './capture/chromium/chromium-path.js';
import { accountId, adminCall } from './cli/admin-client.js';
import { backupDataDir, BackupError, restoreDataDir } from './cli/backup.js';
import { captureCommand } from './cli/capture.js';
import { captureBatchCommand } from './cli/capture-batch.js';
import { collect, jsonObjectFrom, UsageError, wholeNumber } from './cli/usage-error.js';
import { verifyCommand } from './cli/verify.js';
import { ConfigError, DEFAULTS, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { DataDirLockedError } from './store/data-lock.js';
import { ObjectStorageError } from './store/file-store.js';
import { ImportError } from './store/pg/import-error.js';
import { runMigrations } from './store/pg/migrations.js';
import { StoreOpenError } from './store/pg/pg-stores.js';
import { FilesNotSharedError } from './store/shared-files.js';

// The entry point is the one place of the CLI that reads the environment; it passes it on.
const env = process.env;
const dataDir = (data: string | undefined) => path.resolve(data ?? env.SCREENSHOT_DATA_DIR ?? './data');
const print = (x: unknown) => console.log(JSON.stringify(x, null, 2));
const IMAGES_ELSEWHERE =
  'note: the archive holds no images or page sources: they are kept elsewhere (--files DIR or s3://…); back them up with that storage\'s own tools (a copy of the directory; aws s3 sync or mc mirror of the bucket)';
const DATA_HELP = 'the data directory of the running server (default: $SCREENSHOT_DATA_DIR or ./data)';

/** The database of migrate and import, checked as serve checks it. */
function databaseUrl(given: string | undefined): string {
  const url = given ?? env.SCREENSHOT_DATABASE_URL;
  if (!url) throw new UsageError('a database is needed: --database postgres://… or $SCREENSHOT_DATABASE_URL');
  return loadConfig({}, { databaseUrl: url }).databaseUrl!;
}

/**
 * `--no-proxy <list>`: commander reads a `--no-` flag as the negation of `--proxy`, so this one
 * is declared as an option of its own name (`noProxy`).
 */
function noProxyOption(): Option {
  const option = new Option('--no-proxy <list>', 'comma-separated host names, domains (.corp.example) and CIDR ranges reached directly ($SCREENSHOT_NO_PROXY)');
  option.negate = false;
  return option;
}

/** A login's body from `--from` (a JSON object) and `--storage-state` (its storage_state, with the type it implies). */
async function loginBody(o: { from?: string; storageState?: string }): Promise<Record<string, unknown>> {
  const body = o.from ? await jsonObjectFrom('from', o.from) : {};
  if (o.storageState) body.storage_state = await jsonObjectFrom('storage-state', o.storageState);
  return body;
}

function program(): Command {
  const cli = new Command('screenshot-appliance')
    // Thrown instead of exiting, here and in every command made below (they inherit it).
    .exitOverride()
    .description('A self-hosted screenshot service: the server, and commands for its operators.')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      '\nThe account and key commands talk to the running server of --data DIR (default ./data);\n' +
        'capture talks to a server by its address. serve logs to stderr: JSON lines, or readable\n' +
        'lines when stderr is a terminal.',
    );

  cli
    .command('serve')
    .description('run the service (HTTP API, control panel, capture engine)')
    .option('--host <address>', 'address to listen on (default 0.0.0.0)')
    .option('--port <n>', 'port to listen on; 0 picks a free one (default 8080)')
    .option('--data <dir>', 'NeDB files, images, page sources, admin token (default ./data)')
    .option('--concurrency <n>', 'captures at once (default 2)')
    .option('--browsers <n>', 'Chromium processes the captures are shared among, 1-8 (default 2)')
    .option('--chromium <path>', 'the Chromium executable (default: looked up)')
    .option('--egress-allow <cidr>', 'a range the egress guard denies by default but you allow (repeatable)', collect)
    .option('--ca-file <file>', 'a PEM bundle of certificate authorities the browser, webhooks and uploads trust besides the system\'s (repeatable; $SCREENSHOT_CA_FILES)', collect)
    .option('--proxy <url>', 'an upstream HTTP proxy for outgoing traffic, http://[user:password@]host:port; the egress guard still decides (prefer $SCREENSHOT_PROXY)')
    .addOption(noProxyOption())
    .option('--public-url <url>', 'base of status_url and screenshot_url (behind a reverse proxy)')
    .addOption(new Option('--log-level <level>', 'the lowest level logged').choices(['debug', 'info', 'warn', 'error']))
    .option('--metrics-token <token>', 'a token that opens /metrics and nothing else (prefer $SCREENSHOT_METRICS_TOKEN)')
    .option('--database <url>', 'postgres://… : keep every store in PostgreSQL, shared by every node given it (default: NeDB in --data; $SCREENSHOT_DATABASE_URL)')
    .option(
      '--files <dir|s3://bucket/prefix>',
      'images and page sources: a directory (in a cluster one every node mounts) or S3-compatible object storage, credentials from the AWS variables or files, SCREENSHOT_S3_ENDPOINT for a non-AWS endpoint (default: --data; $SCREENSHOT_FILES_URL or $SCREENSHOT_FILES_DIR)',
    )
    // The server's modules load only for serve: every other command starts in a fraction of the time.
    .action(async (options) => (await import('./cli/serve.js')).serve(options, env, process.stdout));

  const account = cli.command('account').description('create and list accounts');
  account
    .command('create')
    .description('create an account; prints it as JSON')
    .requiredOption('--email <address>', "the account's e-mail address")
    .option('--unverified', 'leave the e-mail address unverified (the API refuses its keys until it is verified)')
    .addOption(new Option('--plan <plan>', 'the plan (default super_user)').choices(['super_user', 'basic']))
    .option('--daily-limit <n>', 'calls per day')
    .option('--monthly-limit <n>', 'calls per month')
    .option('--data <dir>', DATA_HELP)
    .action(async (o) =>
      print(
        await adminCall(dataDir(o.data), 'POST', '/accounts', {
          email: o.email,
          email_verified: !o.unverified,
          plan: o.plan,
          daily_limit: wholeNumber('daily-limit', o.dailyLimit),
          monthly_limit: wholeNumber('monthly-limit', o.monthlyLimit),
        }),
      ),
    );
  account
    .command('list')
    .description('list the accounts as JSON')
    .option('--data <dir>', DATA_HELP)
    .action(async (o) => print((await adminCall(dataDir(o.data), 'GET', '/accounts')).accounts));

  const key = cli.command('key').description('create, list and revoke API keys');
  key
    .command('create')
    .description('create an API key; prints it as JSON, with the key shown this once')
    .requiredOption('--account <id|email>', 'the account the key belongs to')
    .option('--name <name>', "the key's name")
    .option('--ip <address|cidr>', 'an address or range the key may be used from (repeatable; default: any)', collect)
    .option('--network-scope <scope>', "where the key's captures may connect: public, lan, or comma-separated CIDR ranges and host names (default: the account's)")
    .option('--data <dir>', DATA_HELP)
    .action(async (o) => {
      const dir = dataDir(o.data);
      const id = await accountId(dir, o.account);
      const scope = o.networkScope === undefined || o.networkScope === 'public' || o.networkScope === 'lan' ? o.networkScope : String(o.networkScope).split(',').map((entry) => entry.trim());
      print(await adminCall(dir, 'POST', `/accounts/${id}/keys`, { name: o.name, ip_whitelist: o.ip ?? [], network_scope: scope }));
    });
  key
    .command('list')
    .description("list an account's keys as JSON")
    .requiredOption('--account <id|email>', 'the account')
    .option('--data <dir>', DATA_HELP)
    .action(async (o) => {
      const dir = dataDir(o.data);
      print((await adminCall(dir, 'GET', `/accounts/${await accountId(dir, o.account)}/keys`)).keys);
    });
  key
    .command('revoke')
    .description('revoke a key by its id')
    .argument('<key_id>', "the key's id (from key list)")
    .option('--data <dir>', DATA_HELP)
    .action(async (keyId: string, o) => print(await adminCall(dataDir(o.data), 'PATCH', `/keys/${keyId}`, { revoked: true })));

  const login = cli.command('login').description("an account's saved logins, through the running server");
  login
    .command('create')
    .description('save a login for an account from a JSON file, so that its password is never on a command line; prints it as JSON, never a credential')
    .requiredOption('--account <id|email>', 'the account')
    .requiredOption('--from <file>', 'the login: the body of POST /v1/logins ({"name", "type": "form"|"basic"|"storage_state", …}); - reads standard input')
    .option('--storage-state <file>', "a Playwright storageState file, taken as the login's storage_state")
    .option('--data <dir>', DATA_HELP)
    .action(async (o) => {
      const dir = dataDir(o.data);
      print(await adminCall(dir, 'POST', `/accounts/${await accountId(dir, o.account)}/logins`, await loginBody(o)));
    });
  login
    .command('update')
    .description('change a saved login from a JSON file: a new name, new credentials (the next capture signs in with them), a fresh storage_state')
    .argument('<login_id>', "the login's id (from login list)")
    .option('--from <file>', 'the change: the body of PATCH /v1/logins/{id}; - reads standard input')
    .option('--storage-state <file>', 'a Playwright storageState file, taken as the new storage_state')
    .option('--data <dir>', DATA_HELP)
    .action(async (loginId: string, o) => {
      if (!o.from && !o.storageState) throw new UsageError('login update needs --from <file> or --storage-state <file>');
      print(await adminCall(dataDir(o.data), 'PATCH', `/logins/${loginId}`, await loginBody(o)));
    });
  login
    .command('list')
    .description("list an account's saved logins as JSON: name, type, site and state, never a credential")
    .requiredOption('--account <id|email>', 'the account')
    .option('--data <dir>', DATA_HELP)
    .action(async (o) => {
      const dir = dataDir(o.data);
      print((await adminCall(dir, 'GET', `/accounts/${await accountId(dir, o.account)}/logins`)).logins);
    });
  login
    .command('delete')
    .description('remove a saved login and erase its session')
    .argument('<login_id>', "the login's id (from login list)")
    .option('--data <dir>', DATA_HELP)
    .action(async (loginId: string, o) => {
      await adminCall(dataDir(o.data), 'DELETE', `/logins/${loginId}`);
      console.log(`removed ${loginId}`);
    });

  cli
    .command('backup')
    .description(
      'write an archive (.tar.gz) of the data directory, also while its server runs; images kept elsewhere (--files DIR or s3://…) are not in it: back those up with their storage\'s own tools',
    )
    .requiredOption('--out <file>', 'the archive to write')
    .option('--data <dir>', 'the data directory (default: $SCREENSHOT_DATA_DIR or ./data)')
    .action(async (o) => {
      const summary = await backupDataDir(dataDir(o.data), path.resolve(o.out));
      const skipped = summary.skippedLines ? `; ${summary.skippedLines} unreadable datastore line(s) left out` : '';
      console.log(`backed up ${summary.files} files (${summary.bytes} bytes) to ${path.resolve(o.out)}${skipped}`);
      if (!summary.images) console.log(IMAGES_ELSEWHERE);
    });

  cli
    .command('restore')
    .description('put an archive of backup into a new or empty data directory')
    .requiredOption('--from <file>', 'the archive written by backup')
    .requiredOption('--data <dir>', 'the directory to restore into; must be missing or empty')
    .action(async (o) => {
      const target = path.resolve(o.data);
      const summary = await restoreDataDir(path.resolve(o.from), target);
      console.log(`restored ${summary.files} files (${summary.bytes} bytes) into ${target}; start it with: screenshot-appliance serve --data ${target}`);
    });

  cli
    .command('migrate')
    .description('bring the PostgreSQL schema up to date (servers do it at start too)')
    .option('--database <url>', 'postgres://… (default: $SCREENSHOT_DATABASE_URL)')
    .action(async (o) => {
      const applied = await runMigrations(databaseUrl(o.database), createLogger({ level: 'warn', destination: process.stderr }));
      console.log(applied.length ? `applied schema migration(s) ${applied.join(', ')}` : 'the schema is up to date');
    });

  cli
    .command('import')
    .description(
      'copy a NeDB data directory (accounts, keys, jobs, usage, settings, webhooks, monitors) into PostgreSQL; images and page sources are not copied: point --files at them, or copy files/, sources/ and thumbnails/ to the bucket of --files s3://bucket/prefix under the same names',
    )
    .requiredOption('--from <dir>', 'the data directory; its server must be stopped')
    .option('--database <url>', 'postgres://… (default: $SCREENSHOT_DATABASE_URL)')
    .action(async (o) => {
      const log = createLogger({ level: 'warn', destination: process.stderr });
      const { importDataDir } = await import('./store/pg/pg-import.js');
      const counts = await importDataDir(path.resolve(o.from), databaseUrl(o.database), log, (line) => console.log(line));
      console.log(`imported ${Object.entries(counts).map(([what, n]) => `${n} ${what}`).join(', ')}`);
      console.log(
        `images and page sources were not copied: serve with --files ${path.resolve(o.from)}, or copy its files/, sources/ and thumbnails/ into s3://bucket/prefix/ (aws s3 sync, mc mirror) and serve with --files s3://bucket/prefix`,
      );
    });

  cli
    .command('capture')
    .description(
      'capture a page through a running server and save the images; prints their paths, one a line, in the order of --devices. ' +
        'With --from or --sitemap: one batch, saved as a ZIP whose path is printed',
    )
    .argument('[url]', 'the page to capture')
    .option('--from <file>', 'capture every URL of this file (one a line) as one batch')
    .option('--sitemap <url>', 'capture every page of this sitemap as one batch (read by the server)')
    .option('--devices <list>', 'desktop, tablet, mobile or all; comma separated or repeated (default desktop)', collect)
    .option('--full-page', 'capture the whole page height')
    .addOption(new Option('--format <format>', 'the image format').choices(['png', 'jpeg', 'webp']).default('png'))
    .option('--quality <n>', '1-100, jpeg and webp only')
    .option('--out <dir>', 'where the images are saved', '.')
    .option('--server <url>', 'the server', `http://127.0.0.1:${DEFAULTS.port}`)
    .option('--key <key>', 'an API key (default: $SCREENSHOT_API_KEY)')
    .option('--timeout <seconds>', 'how long to wait for the jobs (a batch: 1800)')
    .option('--login <id>', "a saved login of the key's account (login_…): the page is captured signed in")
    .action(async (url: string | undefined, o) => {
      const options = { ...o, key: o.key ?? env.SCREENSHOT_API_KEY };
      const sources = [url, o.from, o.sitemap].filter((given) => given !== undefined).length;
      if (sources !== 1) throw new UsageError('give a URL, --from FILE or --sitemap URL: exactly one of them');
      const failed =
        url === undefined
          ? await captureBatchCommand(options, process.stdout, process.stderr)
          : await captureCommand(url, { ...options, timeout: options.timeout ?? '300' }, process.stdout, process.stderr);
      if (failed) process.exitCode = 1;
    });

  cli
    .command('verify')
    .description("check an evidence bundle (a .wacz) offline: its digests and signature, and whether this appliance's key signed it; exit 0 valid, 1 not")
    .argument('<file>', 'the bundle')
    .option('--public-key <base64>', "the key to call this appliance's, as GET /v1/evidence/public-key shows it (default: the key of --data)")
    .option('--data <dir>', DATA_HELP)
    .action(async (file: string, o) => {
      const check = await verifyCommand(file, { publicKey: o.publicKey, dataDir: dataDir(o.data) }, process.stdout);
      if (!check.valid) process.exitCode = 1;
    });

  return cli;
}

const KNOWN = [UsageError, ConfigError, DataDirLockedError, ChromiumNotFoundError, BackupError, ImportError, StoreOpenError, FilesNotSharedError, ObjectStorageError, TypeError];

async function main(argv: string[]): Promise<void> {
  const cli = program();
  if (argv.length === 0) {
    cli.outputHelp();
    return;
  }
  await cli.parseAsync(argv, { from: 'user' });
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // Commander has printed the help or the mistake already.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  const known = KNOWN.some((kind) => err instanceof kind);
  console.error(known ? `error: ${(err as Error).message}` : err);
  process.exit(err instanceof UsageError ? 2 : 1);
});
