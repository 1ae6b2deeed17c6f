/** Host resources for the Node object and admission: CPU, load, memory, disk, versions. */
import fs from 'node:fs';
import os from 'node:os';

export interface HostSnapshot {
  cpu: number;
  loadAverage: [number, number, number];
  memoryTotalBytes: number;
  /** Linux MemAvailable (what can be allocated without swapping), else os.freemem(). */
  memoryAvailableBytes: number;
  diskTotalBytes: number;
  diskFreeBytes: number;
  uptimeSeconds: number;
}

function memAvailable(): number {
  try {
    const m = fs.readFileSync('/proc/meminfo', 'utf8').match(/^MemAvailable:\s+(\d+) kB/m);
    if (m) return Number(m[1]) * 1024;
  } catch {
    /* not Linux */
  }
  return os.freemem();
}

export function hostSnapshot(diskPath: string): HostSnapshot {
  let diskTotal = 0;
  let diskFree = 0;
  try {
    const s = fs.statfsSync(diskPath);
    diskTotal = s.blocks * s.bsize;
    diskFree = s.bavail * s.bsize;
  } catch {
    /* path missing: report zeros rather than fail the loop */
  }
  const [l1, l5, l15] = os.loadavg();
  return {
    cpu: os.availableParallelism?.() ?? os.cpus().length,
    loadAverage: [l1, l5, l15],
    memoryTotalBytes: os.totalmem(),
    memoryAvailableBytes: memAvailable(),
    diskTotalBytes: diskTotal,
    diskFreeBytes: diskFree,
    uptimeSeconds: Math.round(os.uptime()),
  };
}
