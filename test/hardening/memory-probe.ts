/**
 * Preloaded into the service process by test/hardening/load.test.ts (`--expose-gc --import
 * ./test/hardening/memory-probe.ts`): on SIGUSR2, a full GC (when exposed) and one line
 * `HARDENING_MEM {...}` with process.memoryUsage() on stdout. Not part of the service.
 */
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  const m = process.memoryUsage();
  process.stdout.write(
    `HARDENING_MEM ${JSON.stringify({ gc: Boolean(gc), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers })}\n`,
  );
});
