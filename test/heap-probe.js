// Preloaded (`node --expose-gc --import test/heap-probe.js …`) into a server process that a test starts with an IPC
// channel: on the message "heap" it collects garbage and answers the main thread's heap in use. Test code only: the
// server itself is started exactly as a user starts it.
if (process.send && typeof globalThis.gc === 'function') {
  const gc = globalThis.gc;
  process.on('message', (message) => {
    if (message !== 'heap') return;
    gc();
    gc();
    process.send({ heapUsed: process.memoryUsage().heapUsed });
  });
  // The channel alone does not keep the server running, nor stops it from exiting.
  process.channel?.unref();
}
