/**
 * zod for code that ships in the functions: `zod/mini` with English error messages. Schema modules import
 * it as `import * as z from '<...>/common/zod.ts'`, never 'zod' or 'zod/mini' directly.
 *
 * Why mini: classic zod's method-chaining API layer is cold-start time in every function (a bundle that
 * builds one classic schema loads in ~27 ms, ~10 ms with mini; see dev/bench/bundles.ts for the functions),
 * and one classic import anywhere in a function's graph ships all of it again (test/scripts/zod-mini.e2e.test.ts).
 *
 * Why the locale here: classic loads English messages on import; mini loads none, so every issue would read
 * "Invalid input". This module sets English before any module that imports it runs, so no schema is built
 * or parsed without it. Only `en` is imported: no other locale reaches a bundle.
 *
 * package.json declares the project free of side effects except this module (`sideEffects`), so esbuild
 * keeps the `config` call even where only re-exported names are used.
 */
import * as mini from 'zod/mini';
import en from 'zod/v4/locales/en.js';

mini.config(en());

export * from 'zod/mini';
