/**
 * The console's build (docs/CONSOLE.md): `npm run build` writes dist/console, which the service
 * serves itself (src/console/routes.ts). Everything is bundled: no CDN at run time.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const root = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [preact()],
  build: {
    outDir: path.join(root, '..', 'dist', 'console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // Written for debugging on the server, not referenced from the bundle nor served (src/console/routes.ts).
    sourcemap: 'hidden',
  },
  server: { proxy: { '/api': 'http://localhost:4000' } },
});
