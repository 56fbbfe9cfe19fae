import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { startApp, type StartedApp } from './apps.js';

/** What only a signed-in reader sees, on the wiki's page secret:plans. */
export const SECRET_TEXT = 'Only signed-in readers see the launch plan 7391';

/** DokuWiki (Debian's package, served by PHP on loopback) with one user and a namespace only signed-in users may read. */
export interface SignedInWiki extends StartedApp {
  /** alice's password. */
  password: string;
  /** The page only signed-in users may read. */
  securePage: string;
  /** A saved form login's body for alice, with `password` unless another is given. */
  login(password?: string): Record<string, unknown>;
  /** Sign-ins the wiki has seen: POSTs of its login form, one line each in PHP's access log. */
  signIns(): number;
  /** Requests the wiki has answered, of any kind. */
  requests(): number;
  /** Ends every session: a new cookie salt makes every sign-in cookie unreadable. */
  endSessions(): void;
}

export async function startSignedInWiki(): Promise<SignedInWiki> {
  const wiki = await startApp('dokuwiki');
  const password = `pw-${crypto.randomBytes(6).toString('hex')}`;
  const conf = path.join(wiki.dir, 'conf');
  const hash = execFileSync('php', ['-r', `echo password_hash(${JSON.stringify(password)}, PASSWORD_BCRYPT);`], { encoding: 'utf8' });
  fs.writeFileSync(path.join(conf, 'users.auth.php'), `alice:${hash}:Alice:alice@example.test:admin,user\n`);
  fs.writeFileSync(path.join(conf, 'acl.auth.php'), ['*\t@ALL\t1', '*\t@user\t8', 'secret:*\t@ALL\t0', 'secret:*\t@user\t1', ''].join('\n'));
  // No session cache: every request checks the sign-in cookie against the cookie salt, which endSessions changes.
  fs.appendFileSync(path.join(conf, 'local.php'), "\n$conf['useacl'] = 1;\n$conf['authtype'] = 'authplain';\n$conf['auth_security_timeout'] = -1;\n");
  fs.mkdirSync(path.join(wiki.dir, 'data', 'pages', 'secret'), { recursive: true });
  fs.writeFileSync(path.join(wiki.dir, 'data', 'pages', 'secret', 'plans.txt'), `====== Plans ======\n\n${SECRET_TEXT}\n`);
  return {
    ...wiki,
    password,
    securePage: `${wiki.url}/doku.php?id=secret:plans`,
    login: (given = password) => ({ name: 'wiki', type: 'form', login_url: `${wiki.url}/doku.php?id=start&do=login`, username: 'alice', password: given }),
    signIns: () => (fs.readFileSync(path.join(wiki.dir, 'php.log'), 'utf8').match(/\]: POST \/doku\.php/g) ?? []).length,
    requests: () => (fs.readFileSync(path.join(wiki.dir, 'php.log'), 'utf8').match(/\]: (GET|POST|HEAD) \//g) ?? []).length,
    endSessions: () => fs.writeFileSync(path.join(wiki.dir, 'data', 'meta', '_htcookiesalt2'), crypto.randomBytes(32).toString('hex')),
  };
}
