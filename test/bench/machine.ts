/** The machine a run was measured on, printed with every result (absolute figures depend on it). */
import { cpus, loadavg, totalmem } from 'node:os';
import { version as duckdbVersion } from '@duckdb/node-api';

export interface MachineInfo {
  nproc: number;
  cpu_model: string;
  node: string;
  duckdb: string;
  platform: string;
  total_memory_gib: number;
  /** 1-minute load average when the run started: above nproc means other work shared the CPUs. */
  load_average_1m: number;
}

export function describeMachine(): MachineInfo {
  const list = cpus();
  return {
    nproc: list.length,
    cpu_model: list[0]?.model.trim() ?? 'unknown',
    node: process.version,
    duckdb: duckdbVersion(),
    platform: `${process.platform} ${process.arch}`,
    total_memory_gib: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    load_average_1m: Math.round(loadavg()[0] * 100) / 100,
  };
}
