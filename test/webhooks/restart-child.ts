// A service process for the restart test: it opens the deliveries file, notifies one job's end
// and then keeps running until the test kills it. Arguments: a JSON object (see below).
import path from 'node:path';

import { createEgressPolicy } from '../../server/egress/policy.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { createWebhookService } from '../../server/webhooks/webhook-service.js';

const args = JSON.parse(process.argv[2]) as { file: string; url: string; secret: string; schedule: number[]; jobId: string };
const { deliveries } = await openNedbStores(path.dirname(args.file), silentLogger);
const service = createWebhookService({
  store: deliveries,
  policy: createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }),
  secrets: async () => [args.secret],
  schedule: args.schedule,
});
await service.start();
await service.notify({ job_id: args.jobId, account_id: 'acc_1', callback_url: args.url }, 'screenshot.completed', {
  job_id: args.jobId,
  status: 'completed',
});
process.stdout.write('notified\n');
setInterval(() => {}, 60_000);
