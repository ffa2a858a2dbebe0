// Preloaded into a benchmarked server (`node --import ./bench/loop-delay.mjs …`): watches the process's own event
// loop and, on SIGUSR2, writes what it saw since the last SIGUSR2 as JSON to the file named by
// SIGNALBOX_BENCH_LOOP_FILE (written whole, by rename), then starts over. Values in milliseconds.
//
// - maxMs, p99Ms, p50Ms: perf_hooks.monitorEventLoopDelay at 10 ms resolution (a value is the time between two
//   ticks of its 10 ms timer, so an idle loop reads ≈ 10; a stall of s ms reads ≈ 10 + s).
// - busyMaxMs: the most CPU time the main thread used between two ticks of a 10 ms timer (Linux: its run time in
//   /proc/self/task/<pid>/schedstat, so the garbage collector's background threads do not count). On a shared
//   machine a late tick can mean the process was not scheduled; this tells a stall the server caused by its own
//   work (garbage-collection pauses included) from one the machine's load caused.
// - gcMaxMs, gcMaxKind, gcTotalMs: the longest garbage-collection pause and its kind (minor = scavenge,
//   major = mark-compact), and the sum of all pauses (PerformanceObserver 'gc').
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
/** perf_hooks.constants.NODE_PERFORMANCE_GC_* values. */
const GC_KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' };
const file = process.env.SIGNALBOX_BENCH_LOOP_FILE;
const schedstat = `/proc/self/task/${process.pid}/schedstat`;

/**
 * CPU time of the main (JavaScript) thread in ms: its run time from /proc (ns), which leaves out the garbage
 * collector's background threads; where that file does not exist, the whole process's CPU time.
 */
function mainThreadCpuMs() {
  try {
    return Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    const cpu = process.cpuUsage();
    return (cpu.user + cpu.system) / 1000;
  }
}
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let busyMax = 0;
  let lateMax = 0;
  let lastWall = performance.now();
  let lastCpu = mainThreadCpuMs();
  setInterval(() => {
    const wall = performance.now();
    const cpu = mainThreadCpuMs();
    busyMax = Math.max(busyMax, Math.min(cpu - lastCpu, wall - lastWall));
    lateMax = Math.max(lateMax, wall - lastWall);
    lastWall = wall;
    lastCpu = cpu;
  }, RESOLUTION_MS).unref();
  let gcMax = 0;
  let gcMaxKind = '';
  let gcTotal = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration > gcMax) {
        gcMax = entry.duration;
        gcMaxKind = GC_KINDS[entry.detail?.kind] ?? String(entry.detail?.kind);
      }
      gcTotal += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  let sequence = 0;
  process.on('SIGUSR2', () => {
    const ms = (ns) => ns / 1e6;
    const snapshot = {
      sequence: ++sequence,
      resolutionMs: RESOLUTION_MS,
      count: histogram.count,
      maxMs: ms(histogram.max),
      p99Ms: ms(histogram.percentile(99)),
      p50Ms: ms(histogram.percentile(50)),
      busyMaxMs: busyMax,
      tickMaxMs: lateMax,
      gcMaxMs: gcMax,
      gcMaxKind,
      gcTotalMs: gcTotal,
    };
    histogram.reset();
    busyMax = 0;
    lateMax = 0;
    gcMax = 0;
    gcTotal = 0;
    writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
    renameSync(`${file}.tmp`, file);
  });
}
