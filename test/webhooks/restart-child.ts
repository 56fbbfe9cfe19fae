// A service process for the restart test: it opens the deliveries file, notifies one job's end
// and then keeps running until the test kills it. Arguments: a JSON object (see below).
import Datastore from 'nedb-promises';

import { createEgressPolicy } from '../../server/egress/policy.js';
import { createWebhookService } from '../../server/webhooks/webhook-service.js';

const args = JSON.parse(process.argv[2]) as { file: string; url: string; secret: string; schedule: number[]; jobId: string };
const datastore = Datastore.create({ filename: args.file, autoload: false });
await datastore.load();
const service = createWebhookService({
  datastore,
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
