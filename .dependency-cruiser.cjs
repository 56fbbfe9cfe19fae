// The layers of the code and the rule that they point one way, checked by `npm run lint`
// (dependency-cruiser; docs/architecture.md draws them). Type-only imports count: a store that
// names a type of the HTTP edge depends on the edge as surely as one that calls it.
//
// server/, from the top; a layer imports only the layers below it (and itself):
//
//   entry       server/cli.ts, server/cli/: the headless command line
//   root        server/services.ts (the composition root), server/server.ts, server/app.ts,
//               server/client-errors.ts: listening, mounting the routes
//   api         server/api/: the HTTP edge (parse, authenticate, call a service, answer)
//   services    server/jobs/, server/webhooks/, server/auth/, server/limits/, server/metrics/,
//               server/monitors/, server/uploads/, server/logins/, server/settings.ts
//   crypto      server/crypto/: sealing under a key kept in the data directory (or shared by
//               the nodes of a cluster)
//   store       server/store/: the stores and the records they keep (server/store/records/)
//   contract    server/contract/: every request and response shape, declared once as TypeBox
//               schemas, and their validation; the api, the services, the records and the
//               control panel take their types from it
//   capture     server/capture/: Chromium and the capture pipeline
//   egress      server/egress/: the egress policy and the proxy every browser goes through
//   foundation  the other files directly in server/: config, domain errors, time, logger,
//               deadline, keyed turns, IP ranges
//
// The records and the contract name what a capture is (devices, formats, options, warnings),
// so the capture lies below them; it knows nothing of jobs, records or stores. The store takes
// only types from it, never the engine.
//
// The services do not import one another, but for these (one way each):
//   webhooks -> jobs    a webhook carries the job as its status endpoint shows it
//                       (jobs/job-resource.ts, shaped once)
//   metrics -> jobs     a failed job is counted under the class jobs/ gives its failure
//   jobs -> settings    the queue, the runner and retention read the settings the admin
//                       changes at run time
//   monitors -> jobs, webhooks
//                       a monitor's check is an ordinary job (made through the JobService),
//                       and its change is announced as a signed webhook like a job's end
//   jobs -> uploads     a completed job's image goes to the account's own bucket when asked
//   jobs -> logins      a job naming a saved login is captured with its session
//   monitors -> settings a monitor's e-mail goes through the SMTP server of the admin's settings

const layers = [
  { name: 'entry', path: ['^server/cli[.]ts$', '^server/cli/'] },
  { name: 'root', path: ['^server/(services|server|app|client-errors)[.]ts$'] },
  { name: 'api', path: ['^server/api/'] },
  { name: 'services', path: ['^server/(jobs|webhooks|auth|limits|metrics|monitors|uploads|logins)/', '^server/settings[.]ts$'] },
  { name: 'crypto', path: ['^server/crypto/'] },
  { name: 'store', path: ['^server/store/'] },
  { name: 'contract', path: ['^server/contract/'] },
  { name: 'capture', path: ['^server/capture/'] },
  { name: 'egress', path: ['^server/egress/'] },
  { name: 'foundation', path: ['^server/[^/]+[.]ts$'] },
];
// The files directly in server/ that belong to a layer above the foundation.
const upperRootFiles = layers.slice(0, 4).flatMap((layer) => layer.path).filter((p) => p.endsWith('[.]ts$'));

const layerRules = layers.slice(1).map((layer, i) => {
  const above = layers.slice(0, i + 1).map((l) => l.name);
  return {
    name: `${layer.name}-imports-only-below`,
    comment: `${layer.name} must not import ${above.join(', ')}: a layer imports only the layers below it (.dependency-cruiser.cjs).`,
    severity: 'error',
    from: { path: layer.path, ...(layer.name === 'foundation' ? { pathNot: upperRootFiles } : {}) },
    to: { path: layers.slice(0, i + 1).flatMap((l) => l.path) },
  };
});

const services = {
  jobs: '^server/jobs/',
  webhooks: '^server/webhooks/',
  auth: '^server/auth/',
  limits: '^server/limits/',
  metrics: '^server/metrics/',
  monitors: '^server/monitors/',
  uploads: '^server/uploads/',
  logins: '^server/logins/',
  settings: '^server/settings[.]ts$',
};
const servicesMayImport = { webhooks: ['jobs'], metrics: ['jobs'], jobs: ['settings', 'uploads', 'logins'], monitors: ['jobs', 'webhooks', 'settings'] };
const serviceRules = Object.entries(services).map(([name, path]) => ({
  name: `services-apart-${name}`,
  comment: `${name} imports no other service but those .dependency-cruiser.cjs allows it.`,
  severity: 'error',
  from: { path },
  to: {
    path: Object.entries(services)
      .filter(([other]) => other !== name && !(servicesMayImport[name] ?? []).includes(other))
      .map(([, p]) => p),
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module reaches itself through its imports (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'resolvable',
      comment: 'An import the checker cannot resolve is an import no rule can check.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'layer-known',
      comment: 'Every module under server/ belongs to a layer of .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^server/', pathNot: layers.flatMap((l) => l.path) },
      to: {},
    },
    ...layerRules,
    ...serviceRules,
    {
      name: 'store-takes-capture-types-only',
      comment: 'The records name what a capture is; no store runs one.',
      severity: 'error',
      from: { path: '^server/store/' },
      to: { path: '^server/capture/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'server-no-electron',
      comment: 'server/ runs in plain Node; the desktop app passes its ElectronEngine in.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: ['^(node_modules/)?electron(/|$)', '^(main|renderer)/'] },
    },
    {
      name: 'renderer-takes-contract-types-only',
      comment: 'The control panel takes types from server/contract/ and no code of the server.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^server/', pathNot: '^server/contract/' },
    },
    {
      name: 'renderer-takes-types-only',
      comment: 'The control panel takes types from server/contract/ and no code of the server.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^server/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // Packages that only export for `import` (typebox, got, p-queue) resolve as Node and tsc resolve them.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'types', 'default'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
