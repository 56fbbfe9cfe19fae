import { LoginCreate, LoginPatch } from '../../contract/logins.js';
import { plain } from './components.js';
import type { V1DocumentParts } from './v1-monitors.js';

const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The login id (login_…)' };

/** The /logins paths of the v1 document. */
export function loginPaths({ json, ref, rateHeaders, authErrors, keyedError }: V1DocumentParts): Record<string, unknown> {
  const ok = (description: string, schema: string) => ({ description, headers: rateHeaders, content: json(ref('schemas', schema)) });
  const notFound = keyedError('No such login, or a login of another account');
  const badRequest = keyedError('A field is invalid; message names it');
  const tags = ['logins'];
  return {
    '/logins': {
      post: {
        operationId: 'createLogin',
        tags,
        summary: 'Save a login: a sign-in form, HTTP Basic credentials for a site, or an imported Playwright storageState',
        description:
          'A job, monitor or render link names it with `login`. Passwords and sessions are sealed and never answered: a login shows its ' +
          'name, type, site and state only.',
        requestBody: { required: true, content: json(plain(LoginCreate)) },
        responses: { '201': ok('The login', 'Login'), '400': badRequest, ...authErrors },
      },
      get: { operationId: 'listLogins', tags, summary: "The key's account's logins, oldest first", responses: { '200': ok('The logins', 'LoginList'), ...authErrors } },
    },
    '/logins/{id}': {
      get: { operationId: 'getLogin', tags, summary: 'A login', parameters: [id], responses: { '200': ok('The login', 'Login'), '404': notFound, ...authErrors } },
      patch: {
        operationId: 'updateLogin',
        tags,
        summary: 'Change a login; new credentials drop the session kept, so the next capture signs in afresh',
        parameters: [id],
        requestBody: { required: true, content: json(plain(LoginPatch)) },
        responses: { '200': ok('The login as changed', 'Login'), '400': badRequest, '404': notFound, ...authErrors },
      },
      delete: {
        operationId: 'deleteLogin',
        tags,
        summary: 'Remove a login and erase its session',
        parameters: [id],
        responses: { '204': { description: 'Removed', headers: rateHeaders }, '404': notFound, ...authErrors },
      },
    },
  };
}
