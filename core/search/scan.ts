/**
 * Sentence vectors in rows, in WebAssembly memory, and the scan of a query over all of them (scan.wat: 128-bit SIMD,
 * single-precision sums). A long query's scan over 10,000 tools × 512 dimensions took 6–10 ms in JavaScript (four
 * running sums in double precision) and takes about 1.5 ms here (docs/search.md). A row never set is zeros: its
 * product with any query is 0.
 */
import { SCAN_WASM } from './scan-wasm.js';

const module = new WebAssembly.Module(Buffer.from(SCAN_WASM, 'base64'));
const PAGE = 65_536;

interface ScanExports {
  scan(q: number, rows: number, n: number, dims: number, out: number): void;
}

export class VectorRows {
  private readonly exports: ScanExports;
  private readonly query: Float32Array;
  private readonly scores: Float32Array;
  private readonly vectors: Float32Array;
  private readonly rowsAt: number;
  private readonly scoresAt: number;

  /** `dims` a multiple of 8. */
  constructor(
    readonly count: number,
    readonly dims: number,
  ) {
    if (dims % 8 !== 0) throw new Error(`VectorRows: ${dims} dimensions is not a multiple of 8`);
    const align = (bytes: number) => Math.ceil(bytes / 16) * 16;
    this.scoresAt = align(dims * 4);
    this.rowsAt = this.scoresAt + align(count * 4);
    const bytes = this.rowsAt + count * dims * 4;
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    this.exports = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as ScanExports;
    this.query = new Float32Array(memory.buffer, 0, dims);
    this.scores = new Float32Array(memory.buffer, this.scoresAt, count);
    this.vectors = new Float32Array(memory.buffer, this.rowsAt, count * dims);
  }

  /** Puts a vector (of `dims` floats) in row `row`. */
  set(row: number, vector: Float32Array): void {
    this.vectors.set(vector, row * this.dims);
  }

  /** q · each row, by row: a view that the next scan overwrites. A shorter q counts as zeros past its end. */
  scan(q: Float32Array): Float32Array {
    if (q.length < this.dims) this.query.fill(0);
    this.query.set(q.subarray(0, this.dims));
    this.exports.scan(0, this.rowsAt, this.count, this.dims, this.scoresAt);
    return this.scores;
  }
}
