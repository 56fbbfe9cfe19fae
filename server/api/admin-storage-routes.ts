import type Router from '@koa/router';

import { StorageDestinationPut } from '../contract/storage.js';
import { validateBody } from '../contract/validate.js';
import type { StorageDestinations } from '../uploads/destinations.js';
import { requestBody as body } from './json-body.js';

/**
 * An account's storage destination for the admin API: `PUT /admin/api/accounts/:id/storage`
 * sets it (the credentials sealed, never answered), `GET` shows it without the secret, `DELETE`
 * removes it. Registered on the admin router (prefix `/admin/api`, behind the admin token).
 */
export function adminStorageRoutes(router: Router, destinations: StorageDestinations): void {
  router.get('/accounts/:id/storage', async (ctx) => {
    ctx.body = await destinations.view(ctx.params.id);
  });
  router.put('/accounts/:id/storage', async (ctx) => {
    ctx.body = await destinations.put(ctx.params.id, validateBody(StorageDestinationPut, body(ctx)));
  });
  router.delete('/accounts/:id/storage', async (ctx) => {
    await destinations.remove(ctx.params.id);
    ctx.status = 204;
  });
}
