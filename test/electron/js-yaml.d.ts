// js-yaml comes with electron-builder (it reads electron-builder.yml with it) and has no types of its own.
declare module 'js-yaml' {
  export function load(source: string): unknown;
}
