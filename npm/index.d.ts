/// <reference lib="esnext.disposable" />
/**
 * tandem: an in-browser tensor runtime on WebGPU, with MLX-style lazy arrays and streams and
 * MLX's and PyTorch's memory calls.
 *
 * ```ts
 * import * as tn from "tandem";
 * await tn.initRuntime();                          // loads the wasm, gets a WebGPU device
 * const a = tn.array([[1, 2], [3, 4]]);            // NDArray<"float32">, shape [2, 2]
 * const b = tn.softmax(tn.matmul(a, a), { axis: -1, stream: "gpu" });
 * console.log(await b.toArray());                  // Float32Array(4)
 * ```
 *
 * @packageDocumentation
 */

// ---------------------------------------------------------------------------------------------
// Loading and the runtime
// ---------------------------------------------------------------------------------------------

/** Where the WebAssembly module comes from, when not from `tandem_bg.wasm` beside the package. */
export type WasmSource =
  | string
  | URL
  | Request
  | Response
  | BufferSource
  | WebAssembly.Module
  | Promise<Response>;

/**
 * Loads the WebAssembly module, once; later calls return the same promise. `initRuntime()`
 * calls it, so call it yourself only to load the module from elsewhere (a CDN, bytes you
 * fetched, a compiled module). Bundlers (Vite, webpack 5) and plain pages find the files beside
 * the package without help.
 *
 * The package has two builds: on a cross-origin isolated page (see `docs/threads.md`) the
 * threaded one (`tandem_threaded_bg.wasm`), whose CPU kernels split over a pool of Web
 * Workers and whose long CPU work runs on them, off the calling thread (a read awaits it as it
 * awaits the GPU), and the single-threaded one (`tandem_bg.wasm`) elsewhere, where CPU
 * kernels run on the calling thread and block it while they run; `opts.threaded` picks
 * one (the threaded build on a page that is not isolated is a `DeviceError`). Each build has a
 * relaxed-SIMD variant (`tandem_relaxed_bg.wasm`, `tandem_threaded_relaxed_bg.wasm`: a fused
 * multiply-add in the CPU stream's kernels), which is fetched where the engine compiles
 * relaxed SIMD (`docs/threads.md`). `source` is a module of the build that loads, either
 * variant.
 *
 * ```ts
 * await tn.loadWasm(new URL("/assets/tandem_bg.wasm", location.href), { threaded: false });
 * await tn.initRuntime();
 * ```
 */
export function loadWasm(source?: WasmSource, opts?: { threaded?: boolean }): Promise<void>;
export default loadWasm;

/** Options of {@link initRuntime}. */
export interface RuntimeOptions {
  /** Passed to `navigator.gpu.requestAdapter`. */
  powerPreference?: "low-power" | "high-performance";
  /** Reject with a `DeviceError` when there is no WebGPU, instead of running the `gpu` device's
   * work on the CPU. */
  requireGpu?: boolean;
  /** The device ops use when they name no stream; without it the runtime chooses (the GPU on a
   * hardware adapter, the faster device by measurement on a fallback adapter). */
  defaultDevice?: DeviceName;
  /** The budget for active memory, in bytes (as {@link setMemoryLimit}). */
  memoryLimit?: number;
  /** The bound on cached bytes (as {@link setCacheLimit}); `0` disables the cache. */
  cacheLimit?: number;
  /** The most threads the CPU stream's kernels use (a whole number from 1 to 64; by default
   * `navigator.hardwareConcurrency`, at most 8). More than 1 needs a cross-origin isolated
   * page; `1` loads the single-threaded build. The first start decides how many workers run;
   * a later call may only lower the count. `RuntimeInfo.threads` says what the page got. */
  threads?: number;
}

/** What {@link initRuntime} found. */
export interface RuntimeInfo {
  /** Whether a WebGPU device was obtained; without one the `gpu` device runs on the CPU. */
  gpu: boolean;
  adapter: {
    vendor: string;
    architecture: string;
    device: string;
    description: string;
    /** A software adapter (SwiftShader, llvmpipe) that runs on the CPU's cores. */
    isFallbackAdapter: boolean;
  } | null;
  /** The device's limits by their WebGPU names (`maxBufferSize`, …). */
  limits: Record<string, number>;
  /** WebGPU feature names the device has. */
  features: string[];
  /** The device ops use when they name no stream, why, and where the choice came from:
   * `"measured"` at start (a fallback adapter), `"remembered"` from an earlier page load on this
   * adapter and tandem version, or `"given"` (a hardware adapter's GPU, or `initRuntime`'s
   * `defaultDevice`). */
  defaultDevice: { device: DeviceName; reason: string; source: StartupSource };
  /** Which `exp` the GPU kernels use: WGSL's built-in where a probe measured it within
   * tandem's accuracy promise on this adapter, else tandem's range-reduced one. */
  math: { exp: "builtin" | "accurate"; reason: string; source: "measured" | "remembered" } | null;
  /** The matmul kernel, chosen by timing the candidates at the first GPU matmul (on its
   * shape), or remembered from an earlier page load. Read live: `kernel` is `null` and
   * `source` `"not yet needed"` until then. `null` without a GPU. */
  readonly matmul: { kernel: string | null; reason: string; source: StartupSource } | null;
  /** What each start-up step took, in ms (`device`, `exp probe`, `default device`); 0 for a
   * remembered step. Choices are kept per adapter and version in IndexedDB, so a later page
   * load (or worker) of the same origin measures nothing. */
  startupMs: Record<string, number>;
  /** How many threads the CPU stream's kernels split over, which build of the module runs
   * (`"threaded"` on a cross-origin isolated page), and why: a page that asked for threads it
   * cannot have (no isolation) is told so here. Read live: a later `initRuntime({threads})`
   * may lower `count`. */
  readonly threads: {
    count: number;
    build: "threaded" | "single-threaded";
    /** Whether the module that runs uses relaxed SIMD (a fused multiply-add in the CPU
     * stream's products): the package loads that variant of either build where the engine
     * compiles it. */
    relaxedSimd: boolean;
    crossOriginIsolated: boolean;
    reason: string;
  } | null;
}

/** Where a start-up choice came from (see {@link RuntimeInfo}). */
export type StartupSource = "measured" | "remembered" | "given" | "not yet needed";

/**
 * Loads the WebAssembly module (once) and asks WebGPU for an adapter and a device. Call it
 * before anything else; calling it again returns the same runtime (after a device loss, a new
 * one).
 *
 * ```ts
 * const info = await tn.initRuntime({ memoryLimit: 512 * 2 ** 20 });
 * if (!info.gpu) console.log("no WebGPU: the gpu device runs on the CPU");
 * ```
 */
export function initRuntime(opts?: RuntimeOptions): Promise<RuntimeInfo>;

// ---------------------------------------------------------------------------------------------
// Dtypes, devices and streams
// ---------------------------------------------------------------------------------------------

/**
 * An array's element type. `float16` and `bfloat16` hold 2 bytes an element and `int8` and
 * `uint8` one, on both devices and in every memory figure; kernels compute them in `float32`
 * (or `int32`/`uint32`) and round once on store. `bool` arrays read back as `Uint8Array`.
 */
export type DType = "float32" | "float16" | "bfloat16" | "int32" | "uint32" | "int8" | "uint8" | "bool";

/** The floating-point dtypes. */
export type FloatDType = "float32" | "float16" | "bfloat16";

/**
 * The engine's `Float16Array` (Chromium 135+, Firefox 129+) where TypeScript's lib declares one
 * (`esnext`), else `Float32Array`.
 */
export type Float16ArrayOrFloat32 = typeof globalThis extends { Float16Array: { prototype: infer P } }
  ? P | Float32Array
  : Float32Array;

/** The dtype of a float-valued op on `D`: a float dtype keeps itself, others give `float32`. */
export type FloatOf<D extends DType> = D extends "float16" | "bfloat16" ? D : "float32";

/** The dtype of `sum` and `prod` (MLX's): bools and `int8` count in `int32`, `uint8` in `uint32`. */
export type SumOf<D extends DType> = D extends "bool" | "int8" ? "int32" : D extends "uint8" ? "uint32" : D;

/** A device: `"cpu"` (Rust kernels in wasm) or `"gpu"` (WGSL on WebGPU). */
export type DeviceName = "cpu" | "gpu";

/** A stream, or a device name for that device's default stream. */
export type StreamLike = Stream | DeviceName;

/** The typed array {@link NDArray.toArray} resolves to, by dtype. */
export interface TypedArrayOf {
  float32: Float32Array;
  /** A `Float16Array` where the engine has one, else a `Float32Array` of the same values. */
  float16: Float16ArrayOrFloat32;
  /** A `Float32Array` of the same values (JavaScript has no bfloat16 array). */
  bfloat16: Float32Array;
  int32: Int32Array;
  uint32: Uint32Array;
  int8: Int8Array;
  uint8: Uint8Array;
  bool: Uint8Array;
}

/** A value of an array of dtype `D`, as JS sees it. */
export type ElementOf<D extends DType> = D extends "bool" ? boolean : number;

/** Nested JS arrays of `T` ({@link NDArray.tolist}); a bare `T` for a 0-d array. */
export type NestedList<T> = T | NestedList<T>[];

/** MLX's promotion table over tandem's dtypes (where MLX gives int16 or int64, `int32`). */
export interface PromotionTable {
  bool: { bool: "bool"; uint8: "uint8"; uint32: "uint32"; int8: "int8"; int32: "int32"; float16: "float16"; bfloat16: "bfloat16"; float32: "float32" };
  uint8: { bool: "uint8"; uint8: "uint8"; uint32: "uint32"; int8: "int32"; int32: "int32"; float16: "float16"; bfloat16: "bfloat16"; float32: "float32" };
  uint32: { bool: "uint32"; uint8: "uint32"; uint32: "uint32"; int8: "int32"; int32: "int32"; float16: "float16"; bfloat16: "bfloat16"; float32: "float32" };
  int8: { bool: "int8"; uint8: "int32"; uint32: "int32"; int8: "int8"; int32: "int32"; float16: "float16"; bfloat16: "bfloat16"; float32: "float32" };
  int32: { bool: "int32"; uint8: "int32"; uint32: "int32"; int8: "int32"; int32: "int32"; float16: "float16"; bfloat16: "bfloat16"; float32: "float32" };
  float16: { bool: "float16"; uint8: "float16"; uint32: "float16"; int8: "float16"; int32: "float16"; float16: "float16"; bfloat16: "float32"; float32: "float32" };
  bfloat16: { bool: "bfloat16"; uint8: "bfloat16"; uint32: "bfloat16"; int8: "bfloat16"; int32: "bfloat16"; float16: "float32"; bfloat16: "bfloat16"; float32: "float32" };
  float32: { bool: "float32"; uint8: "float32"; uint32: "float32"; int8: "float32"; int32: "float32"; float16: "float32"; bfloat16: "float32"; float32: "float32" };
}

/**
 * The dtype of an op on arrays of dtypes `A` and `B` (MLX's promotion, {@link PromotionTable}).
 * Unknown (`DType`) when either is.
 */
export type Promote<A extends DType, B extends DType> = DType extends A
  ? DType
  : DType extends B
    ? DType
    : PromotionTable[A][B];

/** The dtype of an array op a number: a JS number is typed by the array, as MLX types Python
 * scalars, except that a fraction makes an integer array's result `float32`. */
export type WithNumber<D extends DType> = D extends FloatDType ? D : DType;

/** The dtype of `a op b`, for an arithmetic op. */
export type ArithmeticOf<A extends Operand, B extends Operand> = A extends NDArray<infer DA>
  ? B extends NDArray<infer DB>
    ? Promote<DA, DB>
    : WithNumber<DA>
  : B extends NDArray<infer DB>
    ? WithNumber<DB>
    : DType;

/** An operand of an elementwise op: an array, or a number or boolean broadcast against it. */
export type Operand = NDArray | number | boolean;

/**
 * An ordered lane of work on a device (MLX's `mx.Stream`). The streams of one device share its
 * queue, so they order work without running it in parallel with each other; streams of
 * different devices overlap.
 */
export class Stream {
  private constructor();
  /** `"cpu"` or `"gpu"`. */
  readonly device: DeviceName;
  /** The stream's number: the `gpu` device's default stream is 0 and the `cpu` device's 1;
   * `newStream` counts on from 2, across both devices. */
  readonly index: number;
  /** `Stream(gpu, 0)`. */
  toString(): string;
  /** Frees the JS handle (the stream itself lives on). */
  free(): void;
  [Symbol.dispose](): void;
}

/** The default stream of a device. */
export function defaultStream(device: DeviceName): Stream;
/** A new stream on a device (MLX's `mx.new_stream`). */
export function newStream(device: DeviceName): Stream;
/** Makes `device` the one ops use when they name no stream. */
export function setDefaultDevice(device: DeviceName): void;
/** The device ops use when they name no stream. */
export function defaultDevice(): DeviceName;
/**
 * Resolves once the work queued on `stream` (on every stream, without one) has finished,
 * readbacks in flight included.
 */
export function synchronize(stream?: StreamLike): Promise<void>;
/** `evaluate(...trees)` (MLX's `mx.eval`): runs the graphs behind the arrays and resolves once
 * their results are computed on every device. Each argument is an array or a {@link Tree} of
 * them (`evaluate(loss, grads)`, `evaluate([a, b])`); numbers and `null` in a tree are skipped,
 * as MLX skips leaves that are not arrays. */
export function evaluate(...trees: Tree[]): Promise<void>;
/** Tuning: the most GPU dispatches one submit carries, 1 to 1024 (64 by default). */
export function setDispatchesPerSubmit(count: number): void;
/** The most GPU dispatches one submit carries. */
export function dispatchesPerSubmit(): number;

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/**
 * The options every op takes, as its last argument. `stream` is a {@link Stream} or `"cpu"` /
 * `"gpu"` (that device's default stream); without it, the default device's default stream. An
 * unknown key is a `ValueError`, never silently ignored.
 */
export interface StreamOptions {
  stream?: StreamLike;
}

/** An axis, or several; negative axes count from the end. */
export type Axes = number | readonly number[];

/** Options of the reductions (`sum`, `mean`, `max`, …). Without `axis`, every axis. */
export interface ReduceOptions extends StreamOptions {
  axis?: Axes;
  /** Keep each reduced axis as a size-1 axis. */
  keepdims?: boolean;
}

/** Options of `argmax` and `argmin`. */
export interface ArgReduceOptions extends StreamOptions {
  /** One axis; without it, the index into the flattened array. */
  axis?: number;
  keepdims?: boolean;
}

/** Options of `softmax`: over `axis` (every axis without one). */
export interface SoftmaxOptions extends StreamOptions {
  axis?: Axes;
}

/** Options of `concatenate`, `stack` and `split`: one axis (0 by default). */
export interface AxisOptions extends StreamOptions {
  axis?: number;
}

/** Options of `squeeze`: the size-1 axes to remove (all of them without `axis`). */
export interface SqueezeOptions extends StreamOptions {
  axis?: Axes;
}

/** Options of the creation ops. */
export interface CreationOptions<D extends DType = DType> extends StreamOptions {
  dtype?: D;
}

/** Options of {@link array}. An array's data has no fixed place, so `array` takes no stream. */
export interface ArrayOptions<D extends DType = DType> {
  /** Reshapes the data (its size must match). */
  shape?: readonly number[];
  /** Converts the data (C's rules; JS numbers convert from their exact values). */
  dtype?: D;
}

/** Options of {@link randomUniform}. */
export interface UniformOptions extends StreamOptions {
  /** Bounds of [low, high); [0, 1) by default. */
  low?: number;
  high?: number;
  /** A float dtype; `"float32"` when absent. The draws are float32's, rounded once. */
  dtype?: FloatDType;
  /** A seed for this call alone; without it, the generator of {@link randomSeed} advances. */
  key?: number;
}

/** Options of {@link randomNormal}. */
export interface NormalOptions extends StreamOptions {
  /** Mean and standard deviation; 0 and 1 by default. */
  loc?: number;
  scale?: number;
  /** A float dtype; `"float32"` when absent. */
  dtype?: FloatDType;
  key?: number;
}

/** A bound of {@link clip}: an array (broadcast), a number, or `null` for none. */
export type Bound = NDArray | number | null;

/**
 * `DType` of the data given to {@link array}: a typed array's, `"bool"` for booleans, and
 * `"float32"` for numbers and for data with no element at all (`[]`, `[[]]`), as MLX types
 * `mx.array([])`.
 */
export type DTypeOfData<T> = T extends NestedList<never>
  ? "float32"
  : T extends Float32Array | Float64Array
  ? "float32"
  : T extends Int32Array | Int16Array
    ? "int32"
    : T extends Int8Array
      ? "int8"
      : T extends Uint32Array | Uint16Array
        ? "uint32"
        : T extends Uint8Array | Uint8ClampedArray
          ? "uint8"
          : T extends NestedList<boolean>
            ? "bool"
            : T extends Float16ArrayOrFloat32
              ? "float16"
              : "float32";

/** Data for {@link array}: a number, a boolean, nested arrays of them, or a typed array. */
export type ArrayData =
  | NestedList<number>
  | NestedList<boolean>
  | Float32Array
  | Float64Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint32Array
  | Uint16Array
  | Uint8Array
  | Uint8ClampedArray
  | Float16ArrayOrFloat32;

// ---------------------------------------------------------------------------------------------
// NDArray
// ---------------------------------------------------------------------------------------------

/**
 * A lazy n-dimensional array of dtype `D` (MLX's `mx.array`). Ops build a graph; reading the
 * data (`toArray`, `tolist`, `item`) or {@link evaluate} runs it. Each op also exists as a
 * method: `a.add(b)` is `add(a, b)`.
 *
 * Free an array with `dispose()` (or `using x = …`), or let {@link tidy} do it; arrays a page
 * forgets are freed when the garbage collector takes them.
 */
export class NDArray<D extends DType = DType> {
  private constructor();
  /** The dimensions, outermost first. */
  readonly shape: number[];
  readonly dtype: D;
  /** Number of elements. */
  readonly size: number;
  /** Number of dimensions. */
  readonly ndim: number;
  /** Bytes of the data: 1 per `bool` element, 4 otherwise. */
  readonly nbytes: number;
  /** Whether `dispose()` has been called. */
  readonly isDisposed: boolean;
  /** Evaluates the array and resolves to a row-major typed array of its dtype. */
  toArray(): Promise<TypedArrayOf[D]>;
  /** Evaluates the array and resolves to nested JS arrays (a bare value for a 0-d array). */
  tolist(): Promise<NestedList<ElementOf<D>>>;
  /** Evaluates a one-element array and resolves to its value. */
  item(): Promise<ElementOf<D>>;
  /** Frees the array's memory now; later use throws `DisposedArrayError`. Twice does nothing. */
  dispose(): void;
  [Symbol.dispose](): void;
  /** wasm-bindgen's own release of the handle: frees the memory as `dispose()` does, but a
   * later use of the object fails without a `DisposedArrayError`. Prefer `dispose()`. */
  free(): void;
  /** `NDArray(shape=[2, 3], dtype=float32)`. */
  toString(): string;

  abs(opts?: StreamOptions): NDArray<D>;
  neg(opts?: StreamOptions): NDArray<D>;
  sign(opts?: StreamOptions): NDArray<D>;
  square(opts?: StreamOptions): NDArray<D>;
  sqrt(opts?: StreamOptions): NDArray<FloatOf<D>>;
  rsqrt(opts?: StreamOptions): NDArray<FloatOf<D>>;
  exp(opts?: StreamOptions): NDArray<FloatOf<D>>;
  expm1(opts?: StreamOptions): NDArray<FloatOf<D>>;
  log(opts?: StreamOptions): NDArray<FloatOf<D>>;
  log1p(opts?: StreamOptions): NDArray<FloatOf<D>>;
  sin(opts?: StreamOptions): NDArray<FloatOf<D>>;
  cos(opts?: StreamOptions): NDArray<FloatOf<D>>;
  tan(opts?: StreamOptions): NDArray<FloatOf<D>>;
  tanh(opts?: StreamOptions): NDArray<FloatOf<D>>;
  sigmoid(opts?: StreamOptions): NDArray<FloatOf<D>>;
  relu(opts?: StreamOptions): NDArray<D extends "bool" ? "int32" : D>;
  gelu(opts?: StreamOptions): NDArray<FloatOf<D>>;
  erf(opts?: StreamOptions): NDArray<FloatOf<D>>;
  floor(opts?: StreamOptions): NDArray<D>;
  ceil(opts?: StreamOptions): NDArray<D>;
  round(opts?: StreamOptions): NDArray<D>;
  reciprocal(opts?: StreamOptions): NDArray<FloatOf<D>>;
  logicalNot(opts?: StreamOptions): NDArray<"bool">;
  isnan(opts?: StreamOptions): NDArray<"bool">;
  isinf(opts?: StreamOptions): NDArray<"bool">;
  isfinite(opts?: StreamOptions): NDArray<"bool">;
  log2(opts?: StreamOptions): NDArray<FloatOf<D>>;
  log10(opts?: StreamOptions): NDArray<FloatOf<D>>;
  sinh(opts?: StreamOptions): NDArray<FloatOf<D>>;
  cosh(opts?: StreamOptions): NDArray<FloatOf<D>>;
  arcsin(opts?: StreamOptions): NDArray<FloatOf<D>>;
  arccos(opts?: StreamOptions): NDArray<FloatOf<D>>;
  arctan(opts?: StreamOptions): NDArray<FloatOf<D>>;
  arcsinh(opts?: StreamOptions): NDArray<FloatOf<D>>;
  arccosh(opts?: StreamOptions): NDArray<FloatOf<D>>;
  arctanh(opts?: StreamOptions): NDArray<FloatOf<D>>;
  erfinv(opts?: StreamOptions): NDArray<FloatOf<D>>;
  nanToNum(opts?: NanToNumOptions): NDArray<D>;

  add<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  subtract<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  multiply<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  divide<B extends Operand>(other: B, opts?: StreamOptions): NDArray<FloatOf<ArithmeticOf<NDArray<D>, B>>>;
  power<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  maximum<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  minimum<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  equal(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  notEqual(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  less(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  lessEqual(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  greater(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  greaterEqual(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  logicalAnd(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  logicalOr(other: Operand, opts?: StreamOptions): NDArray<"bool">;
  logaddexp<B extends Operand>(other: B, opts?: StreamOptions): NDArray<FloatOf<ArithmeticOf<NDArray<D>, B>>>;
  floorDivide<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  remainder<B extends Operand>(other: B, opts?: StreamOptions): NDArray<ArithmeticOf<NDArray<D>, B>>;
  arctan2<B extends Operand>(other: B, opts?: StreamOptions): NDArray<FloatOf<ArithmeticOf<NDArray<D>, B>>>;

  clip(lo: Bound, hi: Bound, opts?: StreamOptions): NDArray<D>;
  astype<T extends DType>(dtype: T, opts?: StreamOptions): NDArray<T>;

  sum(opts?: ReduceOptions): NDArray<SumOf<D>>;
  prod(opts?: ReduceOptions): NDArray<SumOf<D>>;
  max(opts?: ReduceOptions): NDArray<D>;
  min(opts?: ReduceOptions): NDArray<D>;
  mean(opts?: ReduceOptions): NDArray<FloatOf<D>>;
  logsumexp(opts?: ReduceOptions): NDArray<FloatOf<D>>;
  argmax(opts?: ArgReduceOptions): NDArray<"uint32">;
  argmin(opts?: ArgReduceOptions): NDArray<"uint32">;
  softmax(opts?: SoftmaxOptions): NDArray<FloatOf<D>>;
  var(opts?: VarOptions): NDArray<FloatOf<D>>;
  std(opts?: VarOptions): NDArray<FloatOf<D>>;
  any(opts?: ReduceOptions): NDArray<"bool">;
  all(opts?: ReduceOptions): NDArray<"bool">;
  cumsum(opts?: ScanOptions): NDArray<D extends "bool" ? "int32" : D>;
  cumprod(opts?: ScanOptions): NDArray<D extends "bool" ? "int32" : D>;
  cummax(opts?: ScanOptions): NDArray<D>;
  cummin(opts?: ScanOptions): NDArray<D>;
  logcumsumexp(opts?: ScanOptions): NDArray<FloatOf<D>>;
  sort(opts?: SortOptions): NDArray<D>;
  argsort(opts?: SortOptions): NDArray<"uint32">;
  topk(k: number, opts?: SortOptions): NDArray<D>;
  take(indices: Indices, opts?: TakeOptions): NDArray<D>;
  diag(k?: number, opts?: StreamOptions): NDArray<D>;
  diag(opts: StreamOptions): NDArray<D>;
  diagonal(opts?: DiagonalOptions): NDArray<D>;
  takeAlongAxis(indices: NDArray<"int32" | "uint32" | "int8" | "uint8">, opts?: TakeOptions): NDArray<D>;
  tril(k?: number, opts?: StreamOptions): NDArray<D>;
  tril(opts: StreamOptions): NDArray<D>;
  triu(k?: number, opts?: StreamOptions): NDArray<D>;
  triu(opts: StreamOptions): NDArray<D>;

  matmul<B extends DType>(other: NDArray<B>, opts?: StreamOptions): NDArray<FloatOf<Promote<D, B>>>;

  reshape(shape: readonly number[], opts?: StreamOptions): NDArray<D>;
  transpose(axes?: readonly number[], opts?: StreamOptions): NDArray<D>;
  transpose(opts: StreamOptions): NDArray<D>;
  expandDims(axis: Axes, opts?: StreamOptions): NDArray<D>;
  squeeze(opts?: SqueezeOptions): NDArray<D>;
  broadcastTo(shape: readonly number[], opts?: StreamOptions): NDArray<D>;
  slice(
    start: readonly number[],
    stop: readonly number[],
    strides?: readonly number[],
    opts?: StreamOptions,
  ): NDArray<D>;
  slice(start: readonly number[], stop: readonly number[], opts: StreamOptions): NDArray<D>;
  flatten(opts?: StreamOptions): NDArray<D>;
  /** {@link stopGradient}: this array, with no gradient flowing back through it. */
  stopGradient(opts?: StreamOptions): NDArray<D>;
}

// ---------------------------------------------------------------------------------------------
// Creation
// ---------------------------------------------------------------------------------------------

/**
 * An array from a number, a boolean, nested arrays of them, or a typed array. JS numbers give
 * `float32` and booleans `bool`; a typed array keeps its dtype (`Float64Array` gives
 * `float32`, smaller integer arrays widen to `int32` or `uint32`); `opts.dtype` converts.
 *
 * ```ts
 * tn.array([[1, 2, 3], [4, 5, 6]]);                        // float32, shape [2, 3]
 * tn.array(new Int32Array([1, 2, 3, 4]), { shape: [2, 2] }); // int32
 * ```
 */
export function array<T extends ArrayData>(data: T, opts?: ArrayOptions<never>): NDArray<DTypeOfData<T>>;
export function array<D extends DType>(data: ArrayData, opts: ArrayOptions<D> & { dtype: D }): NDArray<D>;
export function array(data: ArrayData, opts?: ArrayOptions): NDArray;

/** An array of zeros (`float32` unless `opts.dtype` says otherwise). */
export function zeros<D extends DType = "float32">(shape: readonly number[], opts?: CreationOptions<D>): NDArray<D>;
/** An array of ones (`float32` unless `opts.dtype` says otherwise). */
export function ones<D extends DType = "float32">(shape: readonly number[], opts?: CreationOptions<D>): NDArray<D>;
/** An array filled with `value`: `float32` for a number and `bool` for a boolean by default. */
export function full<D extends DType = "float32">(
  shape: readonly number[],
  value: number,
  opts?: CreationOptions<D>,
): NDArray<D>;
export function full<D extends DType = "bool">(
  shape: readonly number[],
  value: boolean,
  opts?: CreationOptions<D>,
): NDArray<D>;
/**
 * `arange(stop)` or `arange(start, stop, step?)`: values from `start` (0) up to `stop`, by
 * `step` (1), as NumPy's; `float32` by default. The options object may stand in place of an
 * omitted argument.
 */
export function arange<D extends DType = "float32">(stop: number, opts?: CreationOptions<D>): NDArray<D>;
export function arange<D extends DType = "float32">(
  start: number,
  stop: number,
  opts?: CreationOptions<D>,
): NDArray<D>;
export function arange<D extends DType = "float32">(
  start: number,
  stop: number,
  step: number,
  opts?: CreationOptions<D>,
): NDArray<D>;
/** `num` values from `start` to `stop`, both included. */
export function linspace<D extends DType = "float32">(
  start: number,
  stop: number,
  num: number,
  opts?: CreationOptions<D>,
): NDArray<D>;
/** The `n` × `n` identity matrix. */
export function eye<D extends DType = "float32">(n: number, opts?: CreationOptions<D>): NDArray<D>;
/** Seeds the generator: later random arrays are a pure function of `seed` and their order. */
export function randomSeed(seed: number): void;
/** `float32` values uniform in [low, high), the same on both devices (Philox-4x32-10). */
export function randomUniform<D extends FloatDType = "float32">(shape: readonly number[], opts?: UniformOptions & { dtype?: D }): NDArray<D>;
/** `float32` values from a normal distribution, the same on both devices. */
export function randomNormal<D extends FloatDType = "float32">(shape: readonly number[], opts?: NormalOptions & { dtype?: D }): NDArray<D>;

// ---------------------------------------------------------------------------------------------
// Elementwise ops
// ---------------------------------------------------------------------------------------------

/** `|x|`. */
export function abs<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** `-x`; bool arrays are a `DTypeError` (use `logicalNot`). */
export function neg<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** -1, 0 or 1 by the sign of `x`. */
export function sign<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** `x * x`. */
export function square<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** Square root (`float32`). */
export function sqrt<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `1 / sqrt(x)`. */
export function rsqrt<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `e^x`, accurate to about 1e-6 relative over the whole float32 range. */
export function exp<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `e^x - 1`, accurate near 0. */
export function expm1<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Natural logarithm. */
export function log<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `log(1 + x)`, accurate near 0. */
export function log1p<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Sine, range-reduced over the whole float32 range. */
export function sin<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Cosine. */
export function cos<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Tangent. */
export function tan<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Hyperbolic tangent. */
export function tanh<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `1 / (1 + e^-x)`. */
export function sigmoid<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `max(x, 0)`; bools count as `int32`, as in MLX. */
export function relu<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D extends "bool" ? "int32" : D>;
/** The GELU activation (with `erf`). */
export function gelu<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** The error function. */
export function erf<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Rounds down. */
export function floor<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** Rounds up. */
export function ceil<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** Rounds half to even. */
export function round<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** `1 / x`. */
export function reciprocal<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** `!x` (`bool`). */
export function logicalNot(x: NDArray, opts?: StreamOptions): NDArray<"bool">;
/** Whether `x` is NaN (`bool`; integers never are). */
export function isnan(x: NDArray, opts?: StreamOptions): NDArray<"bool">;
/** Whether `x` is +inf or -inf (`bool`). */
export function isinf(x: NDArray, opts?: StreamOptions): NDArray<"bool">;
/** Whether `x` is neither NaN nor infinite (`bool`). */
export function isfinite(x: NDArray, opts?: StreamOptions): NDArray<"bool">;
/** Base-2 logarithm; exact at powers of two. */
export function log2<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Base-10 logarithm. */
export function log10<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Hyperbolic sine, finite up to about 89.4. */
export function sinh<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Hyperbolic cosine. */
export function cosh<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Inverse sine; NaN outside [-1, 1]. */
export function arcsin<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Inverse cosine; NaN outside [-1, 1]. */
export function arccos<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Inverse tangent. */
export function arctan<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Inverse hyperbolic sine. */
export function arcsinh<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Inverse hyperbolic cosine; NaN below 1. */
export function arccosh<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** Inverse hyperbolic tangent; ±inf at ±1, NaN beyond. */
export function arctanh<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** The inverse error function; ±inf at ±1, NaN beyond. */
export function erfinv<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<FloatOf<D>>;
/** The options of `nanToNum`: what NaN, +inf and -inf become. */
export interface NanToNumOptions extends StreamOptions {
  /** What NaN becomes; 0 when absent. */
  nan?: number;
  /** What +inf becomes; the largest finite `float32` when absent. */
  posinf?: number;
  /** What -inf becomes; the most negative finite `float32` when absent. */
  neginf?: number;
}
/** `x` with NaN and infinities replaced (MLX's `nan_to_num`); integer arrays come back as they are. */
export function nanToNum<D extends DType>(x: NDArray<D>, opts?: NanToNumOptions): NDArray<D>;

/** `a + b`, broadcast (either may be a number or boolean); integers wrap like C's. */
export function add<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** `a - b`, broadcast. */
export function subtract<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** `a * b`, broadcast. */
export function multiply<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** `a / b`, broadcast; always `float32`, integers included. */
export function divide<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<FloatOf<ArithmeticOf<A, B>>>;
/** `a ** b`, broadcast. */
export function power<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** The larger of `a` and `b`, broadcast; NaN propagates. */
export function maximum<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** The smaller of `a` and `b`, broadcast; NaN propagates. */
export function minimum<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** `a == b` (`bool`); integers of different signedness compare exact values. */
export function equal(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a != b`. */
export function notEqual(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a < b`. */
export function less(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a <= b`. */
export function lessEqual(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a > b`. */
export function greater(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a >= b`. */
export function greaterEqual(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a && b`, element by element (`bool`). */
export function logicalAnd(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `a || b`, element by element (`bool`). */
export function logicalOr(a: Operand, b: Operand, opts?: StreamOptions): NDArray<"bool">;
/** `log(e^a + e^b)`, without overflow (`float32`). */
export function logaddexp<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<FloatOf<ArithmeticOf<A, B>>>;
/**
 * `floor(a / b)`, broadcast. Floats take the `float32` quotient rounded down (MLX's rule);
 * integers divide exactly, rounding down, and a zero divisor gives 0.
 */
export function floorDivide<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/**
 * The remainder with the sign of the divisor (MLX's and Python's `%`), exact for floats; an
 * integer zero divisor gives `a`.
 */
export function remainder<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** The angle of the point `(b, a)` in radians, `arctan2(y, x)` (`float32`). */
export function arctan2<A extends Operand, B extends Operand>(a: A, b: B, opts?: StreamOptions): NDArray<FloatOf<ArithmeticOf<A, B>>>;

/** `x` where `cond` is true, else `y`, all broadcast together; each may be a number or boolean. */
export function where<X extends Operand, Y extends Operand>(
  cond: Operand,
  x: X,
  y: Y,
  opts?: StreamOptions,
): NDArray<ArithmeticOf<X, Y>>;
/** `x` bounded by `lo` and `hi` (each an array, a number or `null`; at most one `null`). */
export function clip<D extends DType>(x: NDArray<D>, lo: Bound, hi: Bound, opts?: StreamOptions): NDArray<D>;
/** `x` converted to `dtype` (C's rules: truncation, two's-complement wrap). */
export function astype<T extends DType>(x: NDArray, dtype: T, opts?: StreamOptions): NDArray<T>;

// ---------------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------------

/** The sum over `opts.axis` (every axis without one); bools count as `int32`. */
export function sum<D extends DType>(x: NDArray<D>, opts?: ReduceOptions): NDArray<SumOf<D>>;
/** The product over `opts.axis`; bools count as `int32`. */
export function prod<D extends DType>(x: NDArray<D>, opts?: ReduceOptions): NDArray<SumOf<D>>;
/** The maximum over `opts.axis`; NaN propagates. An empty axis is a `ValueError`, as in MLX. */
export function max<D extends DType>(x: NDArray<D>, opts?: ReduceOptions): NDArray<D>;
/** The minimum over `opts.axis`. */
export function min<D extends DType>(x: NDArray<D>, opts?: ReduceOptions): NDArray<D>;
/** The mean over `opts.axis` (`float32` for every dtype; NaN over an empty axis). */
export function mean<D extends DType>(x: NDArray<D>, opts?: ReduceOptions): NDArray<FloatOf<D>>;
/** `log(sum(exp(x)))` over `opts.axis`, computed stably. */
export function logsumexp<D extends DType>(x: NDArray<D>, opts?: ReduceOptions): NDArray<FloatOf<D>>;
/** The index of the first maximum (`uint32`). */
export function argmax(x: NDArray, opts?: ArgReduceOptions): NDArray<"uint32">;
/** The index of the first minimum (`uint32`). */
export function argmin(x: NDArray, opts?: ArgReduceOptions): NDArray<"uint32">;
/** `exp(x) / sum(exp(x))` over `opts.axis` (every axis without one), computed stably. */
export function softmax<D extends DType>(x: NDArray<D>, opts?: SoftmaxOptions): NDArray<FloatOf<D>>;

/** Indices: an `int32`/`uint32` array, or JS integers (one, or a flat list). */
export type Indices = NDArray<"int32" | "uint32" | "int8" | "uint8"> | number | readonly number[];
/** The options of `take` and `takeAlongAxis`. */
export interface TakeOptions extends StreamOptions {
  /** The axis to index; without one, the flattened array. */
  axis?: number;
}
/**
 * The elements of `x` at `indices` along `opts.axis` (of the flattened array without one):
 * `x`'s shape with the axis replaced by the indices' shape (MLX's `take`). Negative indices
 * count from the end. JS integers out of range are a `ValueError`; an array's are clamped on
 * the device, as MLX does.
 */
export function take<D extends DType>(x: NDArray<D>, indices: Indices, opts?: TakeOptions): NDArray<D>;
/**
 * MLX's `take_along_axis`: `indices` has `x`'s rank and broadcasts against it except on
 * `opts.axis`, where the result has the indices' extent (the flattened arrays without one).
 */
export function takeAlongAxis<D extends DType>(x: NDArray<D>, indices: NDArray<"int32" | "uint32" | "int8" | "uint8">, opts?: TakeOptions): NDArray<D>;
/**
 * MLX's `put_along_axis`: a copy of `x` with `values` written at `indices` along `opts.axis`
 * (into the flattened array without one; the result keeps `x`'s shape). `indices` has `x`'s
 * rank; it and `values` broadcast together, and off the axis to `x`'s shape. The values take
 * `x`'s dtype. Of two writes to one element one lands, unspecified which (as in MLX).
 */
export function putAlongAxis<D extends DType>(
  x: NDArray<D>,
  indices: Indices,
  values: NDArray | number | boolean,
  opts?: TakeOptions,
): NDArray<D>;
/**
 * MLX's `slice_update`: a copy of `x` whose slice `slice(x, start, stop, strides)` holds
 * `update`, broadcast to the slice's shape and cast to `x`'s dtype.
 */
export function sliceUpdate<D extends DType>(
  x: NDArray<D>,
  update: NDArray | number | boolean,
  start: readonly number[],
  stop: readonly number[],
  strides?: readonly number[],
  opts?: StreamOptions,
): NDArray<D>;
export function sliceUpdate<D extends DType>(
  x: NDArray<D>,
  update: NDArray | number | boolean,
  start: readonly number[],
  stop: readonly number[],
  opts: StreamOptions,
): NDArray<D>;

/** The options of the running reductions. */
export interface ScanOptions extends StreamOptions {
  /** The axis to run along; without one, the flattened array. */
  axis?: number;
  /** From the end of the axis to its start. */
  reverse?: boolean;
  /** Whether each element's own value counts in its result; true when absent, as in MLX. */
  inclusive?: boolean;
}
/** The running sum along `opts.axis`; bools count as `int32`, integers wrap. */
export function cumsum<D extends DType>(x: NDArray<D>, opts?: ScanOptions): NDArray<D extends "bool" ? "int32" : D>;
/** The running product. */
export function cumprod<D extends DType>(x: NDArray<D>, opts?: ScanOptions): NDArray<D extends "bool" ? "int32" : D>;
/** The running maximum; NaN propagates from where it appears. */
export function cummax<D extends DType>(x: NDArray<D>, opts?: ScanOptions): NDArray<D>;
/** The running minimum; NaN propagates. */
export function cummin<D extends DType>(x: NDArray<D>, opts?: ScanOptions): NDArray<D>;
/** The running `log(sum(exp(x)))`, computed stably (`float32`). */
export function logcumsumexp<D extends DType>(x: NDArray<D>, opts?: ScanOptions): NDArray<FloatOf<D>>;

/**
 * MLX's `mx.fast`: layers computed in fewer kernels than the same composition of plain ops,
 * with the same values within the accuracy promise.
 */
export declare namespace fast {
  /**
   * `(x - mean) / sqrt(var + eps) * weight + bias` over the last axis (`float32`), one kernel a
   * row; `weight` and `bias` are 1-D of the last axis's length, or `null`.
   */
  function layerNorm<D extends DType>(x: NDArray<D>, weight: NDArray | null, bias: NDArray | null, eps: number, opts?: StreamOptions): NDArray<FloatOf<D>>;
  /** `x / sqrt(mean(x^2) + eps) * weight` over the last axis (`float32`), one kernel a row. */
  function rmsNorm<D extends DType>(x: NDArray<D>, weight: NDArray | null, eps: number, opts?: StreamOptions): NDArray<FloatOf<D>>;
  /** The options of `rope`. */
  interface RopeOptions extends StreamOptions {
    /** Rotate neighbouring pairs (GPT-J) instead of the two halves (GPT-NeoX); false when absent. */
    traditional?: boolean;
    /** The frequencies' base; 10000 when absent. */
    base?: number;
    /** Positions are multiplied by it; 1 when absent. */
    scale?: number;
    /** The first position; 0 when absent (a decoding step passes the cache's length). */
    offset?: number;
  }
  /**
   * Rotary position embedding (MLX's `fast.rope`): the first `dims` features of the last axis
   * rotated by position along the second-to-last axis; `x` has at least 3 axes.
   */
  function rope<D extends DType>(x: NDArray<D>, dims: number, opts?: RopeOptions): NDArray<FloatOf<D>>;
  /** The options of `scaledDotProductAttention`. */
  interface AttentionOptions extends StreamOptions {
    /** The scores' factor; `1 / sqrt(D)` when absent. */
    scale?: number;
    /**
     * `"causal"` (query i sees keys up to i + S - L, aligned to the bottom right as in MLX), an
     * additive float array, or a bool array (true: attend); broadcast to `[B, Hq, L, S]`.
     */
    mask?: "causal" | NDArray | null;
  }
  /**
   * `softmax(q kᵀ * scale + mask) v` for q `[B, Hq, L, D]`, k `[B, Hkv, S, D]` and v
   * `[B, Hkv, S, Dv]`, with `Hq` a multiple of `Hkv` (grouped-query attention). Composed of
   * matmuls and one fused softmax for now.
   */
  function scaledDotProductAttention<D extends DType>(q: NDArray<D>, k: NDArray, v: NDArray, opts?: AttentionOptions): NDArray<FloatOf<D>>;
}

/** The options of `sort`, `argsort` and `topk`. */
export interface SortOptions extends StreamOptions {
  /** The axis to sort; the last when absent, and the flattened array for `null` (as in MLX). */
  axis?: number | null;
}
/** `x` sorted along `opts.axis`: a stable sort (ties keep their order), NaN last, -0 equal to +0. */
export function sort<D extends DType>(x: NDArray<D>, opts?: SortOptions): NDArray<D>;
/** The positions that sort `x` along `opts.axis` (`uint32`); stable. */
export function argsort(x: NDArray, opts?: SortOptions): NDArray<"uint32">;
/**
 * The `k` largest elements along `opts.axis`, in descending order (MLX allows any order; NaN
 * counts as the largest, as there). `k` larger than the axis is a `ValueError`.
 */
export function topk<D extends DType>(x: NDArray<D>, k: number, opts?: SortOptions): NDArray<D>;

/** The options of `var` and `std`. */
export interface VarOptions extends ReduceOptions {
  /** Divide by `N - ddof` (0 when absent, as in MLX); `ddof >= N` divides by 0. */
  ddof?: number;
}
/**
 * The variance over `opts.axis` (every axis without one), `float32` for integers. Exported as `var`, a
 * reserved word: call it `tn.var(x)`, or import it renamed (`import { var as variance }`).
 */
declare function variance<D extends DType>(x: NDArray<D>, opts?: VarOptions): NDArray<FloatOf<D>>;
export { variance as var };
/** The standard deviation, `sqrt(var(x, opts))`. */
export function std<D extends DType>(x: NDArray<D>, opts?: VarOptions): NDArray<FloatOf<D>>;
/** Whether any element over `opts.axis` is non-zero (`bool`); false over nothing. */
export function any(x: NDArray, opts?: ReduceOptions): NDArray<"bool">;
/** Whether every element over `opts.axis` is non-zero (`bool`); true over nothing. */
export function all(x: NDArray, opts?: ReduceOptions): NDArray<"bool">;

/** The matrix product, batched, with NumPy's broadcasting of batch axes; float dtypes only (`float16` and `bfloat16` accumulate in `float32` and round once). */
export function matmul<A extends DType, B extends DType>(a: NDArray<A>, b: NDArray<B>, opts?: StreamOptions): NDArray<FloatOf<Promote<A, B>>>;
/** The outer product of `a` and `b` flattened: shape `[a.size, b.size]`, promoted dtype. */
export function outer<A extends NDArray, B extends NDArray>(a: A, b: B, opts?: StreamOptions): NDArray<ArithmeticOf<A, B>>;
/** The options of `pad`. */
export interface PadOptions extends StreamOptions {
  /** `"constant"` (the default) or `"edge"` (the nearest element repeated). */
  mode?: "constant" | "edge";
  /** The constant, converted to the array's dtype; 0 when absent. */
  constantValues?: number;
}
/**
 * `x` padded: `padWidth` is a count for every side, a `[before, after]` pair for every axis, or
 * one pair per axis.
 */
export function pad<D extends DType>(x: NDArray<D>, padWidth: number | readonly [number, number] | readonly (readonly [number, number])[], opts?: PadOptions): NDArray<D>;
/** NumPy's `tile`: `x` repeated `reps` times along each axis. */
export function tile<D extends DType>(x: NDArray<D>, reps: number | readonly number[], opts?: StreamOptions): NDArray<D>;
/** The options of `repeat`. */
export interface RepeatOptions extends StreamOptions {
  /** The axis to repeat along; the flattened array without one. */
  axis?: number;
}
/** Each element repeated `repeats` times along `opts.axis`. */
export function repeat<D extends DType>(x: NDArray<D>, repeats: number, opts?: RepeatOptions): NDArray<D>;
/** The options of `roll`. */
export interface RollOptions extends StreamOptions {
  /** The axes to roll along (one shift for all, or one each); the flattened array without. */
  axis?: number | readonly number[];
}
/** Elements shifted by `shift` along `opts.axis`, wrapping around. */
export function roll<D extends DType>(x: NDArray<D>, shift: number | readonly number[], opts?: RollOptions): NDArray<D>;
/** A 1-D array's square matrix with it on the `k`th diagonal, or a 2-D array's `k`th diagonal. */
export function diag<D extends DType>(x: NDArray<D>, k?: number, opts?: StreamOptions): NDArray<D>;
export function diag<D extends DType>(x: NDArray<D>, opts: StreamOptions): NDArray<D>;
/** The options of `diagonal`. */
export interface DiagonalOptions extends StreamOptions {
  /** Above the main diagonal when positive; 0 when absent. */
  offset?: number;
  /** The plane's axes; 0 and 1 when absent. */
  axis1?: number;
  axis2?: number;
}
/** The diagonal of the planes of `axis1` and `axis2`, as the last axis (MLX's `diagonal`). */
export function diagonal<D extends DType>(x: NDArray<D>, opts?: DiagonalOptions): NDArray<D>;
/**
 * `a`'s axes contracted with `b`'s, pairwise: `axes` is a count (the last `axes` of `a` with the
 * first of `b`; 2 when absent) or `[aAxes, bAxes]`. The result has `a`'s other axes then `b`'s
 * (a float dtype).
 */
export function tensordot(a: NDArray, b: NDArray, axes?: number | readonly [readonly number[], readonly number[]], opts?: StreamOptions): NDArray<FloatDType>;
export function tensordot(a: NDArray, b: NDArray, opts: StreamOptions): NDArray<FloatDType>;
/**
 * Einstein summation in its explicit form (`"ij,jk->ik"`, `"bhqd,bhkd->bhqk"`): labels are
 * letters, distinct within an operand; an options object may follow the operands.
 */
export function einsum(subscripts: string, ...operands: [...NDArray[], StreamOptions] | NDArray[]): NDArray<FloatDType>;
/** The options of `conv1d` and `conv2d`: each is a number, or one per spatial axis. */
export interface ConvOptions extends StreamOptions {
  /** The step between windows; 1 when absent. */
  stride?: number | readonly number[];
  /** Zeros added on both sides of each spatial axis; 0 when absent. */
  padding?: number | readonly number[];
  /** The step between a window's taps; 1 when absent. */
  dilation?: number | readonly number[];
  /** Input and output channels split into this many independent groups; 1 when absent. */
  groups?: number;
}
/**
 * 1-D convolution, channels last (MLX's layout): input `[N, L, C]`, weight `[O, K, C/groups]`,
 * result `[N, L', O]` (a float dtype).
 */
export function conv1d<D extends DType>(input: NDArray<D>, weight: NDArray, opts?: ConvOptions): NDArray<FloatOf<D>>;
/**
 * 2-D convolution, channels last: input `[N, H, W, C]`, weight `[O, KH, KW, C/groups]`, result
 * `[N, H', W', O]` (a float dtype). An im2col copy and one batched matmul; on the CPU stream,
 * followed by a bias or activation (one group), one fused kernel that makes the patches a block
 * of rows at a time as the product needs them (`fusedConv` in profiles).
 */
export function conv2d<D extends DType>(input: NDArray<D>, weight: NDArray, opts?: ConvOptions): NDArray<FloatOf<D>>;
/** The options of a transposed convolution. */
export interface ConvTransposeOptions extends ConvOptions {
  /** Extra output on the far side of each spatial axis, below the stride or the dilation; 0 when absent. */
  outputPadding?: number | readonly number[];
}
/**
 * The transposed (fractionally strided) 1-D convolution, MLX's `conv_transpose1d`: input
 * `[N, L, C]`, weight `[O, K, C/groups]` (the layout `conv1d` takes), result `[N, L', O]` with
 * `L' = (L - 1) * stride - 2 * padding + dilation * (K - 1) + 1 + outputPadding`.
 */
export function convTranspose1d<D extends DType>(input: NDArray<D>, weight: NDArray, opts?: ConvTransposeOptions): NDArray<FloatOf<D>>;
/** The transposed 2-D convolution, MLX's `conv_transpose2d`: input `[N, H, W, C]`, weight `[O, KH, KW, C/groups]`. */
export function convTranspose2d<D extends DType>(input: NDArray<D>, weight: NDArray, opts?: ConvTransposeOptions): NDArray<FloatOf<D>>;
/** The options of `addmm`. */
export interface AddmmOptions extends StreamOptions {
  /** The product's factor; 1 when absent. */
  alpha?: number;
  /** `c`'s factor; 1 when absent. */
  beta?: number;
}
/** `alpha * (a @ b) + beta * c` (MLX's `addmm`), `c` broadcast to the product's shape; a float dtype. */
export function addmm(c: NDArray, a: NDArray, b: NDArray, opts?: AddmmOptions): NDArray<FloatDType>;
/** The elements on and below the `k`th diagonal of the last two axes (`k > 0` above the main one); the rest 0. */
export function tril<D extends DType>(x: NDArray<D>, k?: number, opts?: StreamOptions): NDArray<D>;
export function tril<D extends DType>(x: NDArray<D>, opts: StreamOptions): NDArray<D>;
/** The elements on and above the `k`th diagonal of the last two axes; the rest 0. */
export function triu<D extends DType>(x: NDArray<D>, k?: number, opts?: StreamOptions): NDArray<D>;
export function triu<D extends DType>(x: NDArray<D>, opts: StreamOptions): NDArray<D>;

// ---------------------------------------------------------------------------------------------
// Shapes
// Views without a copy, except concatenate, stack and a reshape that cannot view.
// ---------------------------------------------------------------------------------------------

/** The same data in `shape`; one size may be -1. */
export function reshape<D extends DType>(x: NDArray<D>, shape: readonly number[], opts?: StreamOptions): NDArray<D>;
/** The axes permuted as `axes` says (reversed without it). */
export function transpose<D extends DType>(x: NDArray<D>, axes?: readonly number[], opts?: StreamOptions): NDArray<D>;
export function transpose<D extends DType>(x: NDArray<D>, opts: StreamOptions): NDArray<D>;
/** A size-1 axis inserted at `axis` (a number or a list). */
export function expandDims<D extends DType>(x: NDArray<D>, axis: Axes, opts?: StreamOptions): NDArray<D>;
/** The size-1 axes removed (those of `opts.axis`, or all). */
export function squeeze<D extends DType>(x: NDArray<D>, opts?: SqueezeOptions): NDArray<D>;
/** `x` broadcast to `shape`. */
export function broadcastTo<D extends DType>(x: NDArray<D>, shape: readonly number[], opts?: StreamOptions): NDArray<D>;
/**
 * `x[start:stop:strides]` per axis, as MLX's C++ `slice`: negative indices count from the end,
 * stops clamp to the shape, negative strides walk backwards.
 */
export function slice<D extends DType>(
  x: NDArray<D>,
  start: readonly number[],
  stop: readonly number[],
  strides?: readonly number[],
  opts?: StreamOptions,
): NDArray<D>;
export function slice<D extends DType>(
  x: NDArray<D>,
  start: readonly number[],
  stop: readonly number[],
  opts: StreamOptions,
): NDArray<D>;
/** `x` as one axis. */
export function flatten<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** MLX's `stop_gradient`: `x` itself (a view of its data), with no gradient flowing back through it. */
export function stopGradient<D extends DType>(x: NDArray<D>, opts?: StreamOptions): NDArray<D>;
/** The arrays joined along `opts.axis` (0), promoted to one dtype. */
export function concatenate<D extends DType>(arrays: readonly NDArray<D>[], opts?: AxisOptions): NDArray<D>;
/** The arrays stacked along a new axis `opts.axis` (0), promoted to one dtype. */
export function stack<D extends DType>(arrays: readonly NDArray<D>[], opts?: AxisOptions): NDArray<D>;
/** Views of `x` cut along `opts.axis` (0): into `n` equal sections, or at the given indices. */
export function split<D extends DType>(
  x: NDArray<D>,
  indicesOrSections: number | readonly number[],
  opts?: AxisOptions,
): NDArray<D>[];

// ---------------------------------------------------------------------------------------------
// Weights files
// safetensors and NumPy's .npy, told apart by their content (MLX's mx.load, mx.save,
// mx.save_safetensors).
// ---------------------------------------------------------------------------------------------

/** Where {@link load} reads a file from: a URL (fetched), a `Response`, a `Blob` (a `File`
 * too), an `ArrayBuffer` or a `Uint8Array`. */
export type WeightsSource = string | Response | Blob | ArrayBuffer | Uint8Array;

/** Options of {@link load}. */
export interface LoadOptions extends StreamOptions {
  /** Converts the file's float tensors to this float dtype as they arrive (integer and bool
   * tensors keep theirs, as MLX's loaders convert only float weights). */
  dtype?: FloatDType;
  /** Called as bytes arrive, once the header has told the file's size; last with
   * `bytesRead === bytesTotal`. An exception thrown here ends the load with it. */
  onProgress?: (bytesRead: number, bytesTotal: number) => void;
}

/**
 * Reads a weights file: a safetensors file as a record of arrays by name (in file order), a
 * `.npy` file as one array. Each tensor is made as soon as its bytes have arrived, and with
 * `opts.stream` on the GPU it goes there at once, so a load holds at most one tensor's bytes
 * twice. The header is checked before any data is read: a file whose tensors would not fit
 * under the memory limit fails with `MemoryLimitError`, a dtype tandem lacks (`F64`, `I16`,
 * `'<f8'`, …) with a `DTypeError` naming the tensor, and a malformed or truncated file with a
 * `ValueError` naming the offset or the tensor. A failed load leaves nothing allocated.
 *
 * ```ts
 * const weights = await tn.load("model.safetensors", {
 *   stream: "gpu",
 *   onProgress: (read, total) => console.log(`${Math.round((100 * read) / total)}%`),
 * });
 * ```
 */
export function load(source: WeightsSource, opts?: LoadOptions): Promise<NDArray | Record<string, NDArray>>;
/**
 * The safetensors bytes of `arrays` (every dtype, written little-endian, `bool` one byte an
 * element) with string `metadata`, readable by the `safetensors` Python package and `mx.load`.
 */
export function saveSafetensors(arrays: Record<string, NDArray>, metadata?: Record<string, string>): Promise<Uint8Array>;
/** The `.npy` bytes (NumPy format 1.0) of one array; `bfloat16` is written as MLX writes it,
 * two raw bytes (`'<V2'`), which `mx.load` reads back as bfloat16. */
export function save(array: NDArray): Promise<Uint8Array>;

// ---------------------------------------------------------------------------------------------
// Lifetimes and profiles
// ---------------------------------------------------------------------------------------------

/**
 * Calls `fn` and returns what it returns; every NDArray made meanwhile is disposed unless the
 * result holds it (itself, or inside arrays and plain objects). `fn` must be synchronous.
 *
 * ```ts
 * const y = tn.tidy(() => tn.exp(tn.multiply(x, 2)));   // the product is disposed
 * ```
 */
export function tidy<T>(fn: () => T & NotAPromise<T>): T;

/**
 * What {@link tidy}'s function may return: anything but a promise. An async function's arrays
 * would outlive the scope, so `tidy(async () => …)` is a type error here and a `ValueError` at
 * run time.
 */
export type NotAPromise<T> = T extends PromiseLike<unknown> ? "tidy: fn must be synchronous" : unknown;

/**
 * MLX's `mx.compile`: returns a function that computes what `fn` computes. The first call
 * with given input shapes, dtypes and streams (and numbers, and default device) traces `fn`
 * once, fuses its chains of elementwise ops (unary, binary, `where`, `clip`, `astype`) into one
 * kernel per device and region, and records the graph; later calls with the same kinds of
 * inputs replay it without calling `fn`. `fn` takes and returns trees (NDArrays, numbers,
 * and arrays and plain objects of them; the trees' structure and numbers are part of what a
 * trace is for), so `compile(valueAndGrad(f))` works, and must stay lazy: no `evaluate`, reads or random draws inside it.
 * While it is traced, `fn` gets stand-ins for the call's arrays (a closed-over array passed as
 * an argument stays the closed-over array in later calls); keep none of them. Arrays it makes
 * while tracing are its own (compile disposes them); arrays it closes over are held by the
 * compiled function (`memorySnapshot()` shows them with `owner: "compile"`), and the numbers
 * it uses are kept as numbers, not arrays.
 *
 * The compiled function lets go of its traces, and of the arrays they hold, when the garbage
 * collector takes it, or at once with `dispose()` (or `using`); calling it after `dispose()`
 * throws a `DisposedArrayError`.
 *
 * Parameters without annotations are NDArrays; a function that takes numbers annotates them.
 *
 * ```ts
 * const gelu = tn.compile((x) =>
 *   tn.multiply(tn.multiply(x, 0.5), tn.add(tn.erf(tn.multiply(x, Math.SQRT1_2)), 1)));
 * const y = gelu(x);   // one fused kernel
 * const scale = tn.compile((x: tn.NDArray, s: number) => tn.multiply(x, s));
 * const z = scale(x, 2);
 * ```
 */
export function compile<A extends NDArray[], R extends Tree>(
  fn: (...args: A) => R,
): CompiledFunction<A, R>;
/** A function that also takes numbers or trees (annotate them: `(x: NDArray, s: number) => …`). */
export function compile<A extends Tree[], R extends Tree>(
  fn: (...args: A) => R,
): CompiledFunction<A, R>;

/** What {@link compile} returns: the function, and `dispose()` to free its traces now. */
export type CompiledFunction<A extends Tree[], R extends Tree> = ((
  ...args: A
) => R) & {
  /** Frees every trace and the arrays they hold; later calls throw `DisposedArrayError`. */
  dispose(): void;
  [Symbol.dispose](): void;
};

// ---------------------------------------------------------------------------------------------
// Function transforms (MLX's mx.grad, mx.value_and_grad, mx.vjp, mx.jvp, mx.vmap, mx.checkpoint)
// ---------------------------------------------------------------------------------------------

/**
 * What the function transforms take and return (MLX's pytrees): an NDArray, a number, `null`,
 * or arrays and plain objects of trees.
 */
export type Tree = NDArray | number | null | readonly Tree[] | { readonly [key: string]: Tree };

/**
 * The arguments of a function a transform takes. `any`, so that an unannotated parameter of an
 * arrow written in place (`tn.grad((x) => tn.sum(x))`) is usable, as it is in JavaScript;
 * annotate the parameters for checked types.
 */
export type TransformArgs = any[];

/**
 * A tree of the same shape as `T` with each NDArray and number in it an NDArray. An argument
 * typed `any` (an unannotated parameter) gets gradients typed `any`: nothing is known of its tree.
 */
export type Gradients<T> = 0 extends 1 & T
  ? any
  : T extends NDArray | number
  ? NDArray
  : T extends readonly unknown[]
    ? { [K in keyof T]: Gradients<T[K]> }
    : T extends null
      ? null
      : { [K in keyof T]: Gradients<T[K]> };

/** The options of {@link grad} and {@link valueAndGrad}. */
export interface GradOptions {
  /**
   * The arguments to differentiate by: one index (default `0`; the gradient is that argument's
   * tree) or a list of them (a list of trees).
   */
  argnums?: number | readonly number[];
}

/**
 * MLX's `mx.grad`: a function that returns the gradient of `fn` (which returns a scalar float
 * NDArray) with respect to its arguments at `opts.argnums`. The arguments differentiated are
 * trees; a number among them counts as a float32 scalar, and its gradient is a scalar NDArray.
 * Gradients have the shapes, dtypes and tree structure of their arguments; integer arguments
 * get zeros. `fn` must be synchronous and lazy (no reads or `evaluate` inside). The arrays `fn`
 * makes are disposed after it returns, as by {@link tidy}; its arguments are stand-ins that
 * are disposed too. Transforms compose: `grad(grad(f))`, `vmap(grad(f))`,
 * `compile(valueAndGrad(f))`.
 *
 * ```ts
 * const dloss = tn.grad((w: tn.NDArray, x: tn.NDArray) => tn.sum(tn.square(tn.matmul(x, w))));
 * const w = tn.zeros([3, 1]);
 * const g = dloss(w, x); // the shape of w
 * ```
 */
export function grad<A extends TransformArgs, N extends number = 0>(
  fn: (...args: A) => NDArray,
  opts?: { argnums?: N },
): (...args: A) => Gradients<A[N]>;
/** With a list of `argnums`: a list of gradient trees, one per argument named. */
export function grad<A extends TransformArgs>(
  fn: (...args: A) => NDArray,
  opts: { argnums: readonly number[] },
): (...args: A) => Tree[];

/**
 * MLX's `mx.value_and_grad`: returns `[value, gradients]` in one pass. `fn` may return
 * `[loss, ...aux]` (MLX's `has_aux`): the gradient is the loss's, and `value` is the whole list.
 */
export function valueAndGrad<
  A extends TransformArgs,
  R extends NDArray | readonly [NDArray, ...Tree[]],
  N extends number = 0,
>(fn: (...args: A) => R, opts?: { argnums?: N }): (...args: A) => [R, Gradients<A[N]>];
/** With a list of `argnums`: the gradients are a list of trees, one per argument named. */
export function valueAndGrad<A extends TransformArgs, R extends NDArray | readonly [NDArray, ...Tree[]]>(
  fn: (...args: A) => R,
  opts: { argnums: readonly number[] },
): (...args: A) => [R, Tree[]];

/**
 * MLX's `mx.vjp`: the outputs of `fn(...primals)` and the cotangents of the primals for the
 * outputs' `cotangents` (a list with one tree per output, in the outputs' shapes). Both results
 * are lists, even for one output.
 */
export function vjp(
  fn: (...primals: Tree[]) => Tree,
  primals: readonly Tree[],
  cotangents: readonly Tree[],
): [NDArray[], Tree[]];

/**
 * MLX's `mx.jvp`: the outputs of `fn(...primals)` and their tangents for the primals'
 * `tangents` (one tree per primal). Both results are lists, even for one output.
 */
export function jvp(
  fn: (...primals: Tree[]) => Tree,
  primals: readonly Tree[],
  tangents: readonly Tree[],
): [NDArray[], NDArray[]];

/** A tree of axes: a number, `null` (not mapped), or lists and objects of them. */
export type AxesTree = number | null | readonly AxesTree[] | { readonly [key: string]: AxesTree };

/** The options of {@link vmap}. */
export interface VmapOptions {
  /** Each argument's mapped axis (default 0 for all), or `null` for one passed whole. */
  inAxes?: AxesTree;
  /** Where the mapped axis goes in each output (default 0). */
  outAxes?: AxesTree;
}

/**
 * MLX's `mx.vmap`: `fn` mapped over an axis of its arguments. tandem calls `fn` once per index
 * of the mapped axis, on views of the arguments, and stacks each output's results: every op
 * works as it does unmapped, at the cost of one call (and its kernels) per index. An axis of
 * extent 0 calls `fn` once on zeros to learn the outputs' shapes.
 */
export function vmap<A extends TransformArgs, R extends Tree>(
  fn: (...args: A) => R,
  opts?: VmapOptions,
): (...args: A) => R;

/**
 * MLX's `mx.checkpoint`: the same function, whose intermediates are not kept for a gradient
 * but recomputed when the backward pass reaches it: less peak memory for one more forward pass
 * of `fn`. `fn` must compute the same thing each call (no random draws without a fixed key).
 */
export function checkpoint<A extends TransformArgs, R extends Tree>(fn: (...args: A) => R): (...args: A) => R;

// ---------------------------------------------------------------------------------------------
// Optimizers (MLX's mlx.optimizers)
// ---------------------------------------------------------------------------------------------

/** A learning rate: a number, or a function of the step (0 at the first update). */
export type LearningRate = number | ((step: number) => number);

/** What every optimizer has. */
export interface Optimizer {
  /**
   * The parameters after one update from `grads` (a tree with the structure of `params`);
   * numbers in `params` are kept. Each parameter's state is kept by its path in the tree; the
   * state of the previous update is dropped, as are the old arrays once nothing else holds
   * them. Dispose the old parameters (or update inside {@link tidy}).
   */
  update<P extends Tree>(params: P, grads: Tree): P;
  /** Updates made so far. */
  readonly step: number;
  /** The learning rate the next update uses. */
  readonly learningRate: number;
  /**
   * `{step, learningRate, params}`: `params` mirrors the last parameters updated, each array
   * replaced by its state (`{v}` for SGD with momentum, `{m, v}` for Adam). The arrays are new
   * handles, which the caller disposes.
   */
  readonly state: { step: number; learningRate: number; params: Tree | { [key: string]: NDArray } };
  /** Drops the state now and counts steps from 0 again. */
  reset(): void;
}

/** The options of {@link optimizers.SGD}; MLX's defaults. */
export interface SGDOptions {
  learningRate: LearningRate;
  /** Default 0. */
  momentum?: number;
  /** L2 penalty added to the gradient; default 0. */
  weightDecay?: number;
  /** Default 0. */
  dampening?: number;
  /** Nesterov momentum (needs a momentum and no dampening); default false. */
  nesterov?: boolean;
}

/** The options of {@link optimizers.Adam}; MLX's defaults. */
export interface AdamOptions {
  learningRate: LearningRate;
  /** Default `[0.9, 0.999]`. */
  betas?: readonly [number, number];
  /** Default 1e-8. */
  eps?: number;
  /** MLX's Adam has none unless asked; default false. */
  biasCorrection?: boolean;
}

/** The options of {@link optimizers.AdamW}: Adam's, and a decoupled weight decay. */
export interface AdamWOptions extends AdamOptions {
  /** Default 0.01. */
  weightDecay?: number;
}

/** MLX's `mlx.optimizers`: the optimizer classes and the learning-rate schedules. */
export declare namespace optimizers {
  /** Stochastic gradient descent, with MLX's momentum, dampening, Nesterov and weight decay. */
  class SGD implements Optimizer {
    constructor(opts: SGDOptions);
    update<P extends Tree>(params: P, grads: Tree): P;
    readonly step: number;
    readonly learningRate: number;
    readonly state: Optimizer["state"];
    reset(): void;
  }
  /** Adam, MLX's rule: no bias correction unless `biasCorrection`. */
  class Adam implements Optimizer {
    constructor(opts: AdamOptions);
    update<P extends Tree>(params: P, grads: Tree): P;
    readonly step: number;
    readonly learningRate: number;
    readonly state: Optimizer["state"];
    reset(): void;
  }
  /** AdamW: the parameter shrinks by `1 - learningRate * weightDecay`, then Adam's step. */
  class AdamW implements Optimizer {
    constructor(opts: AdamWOptions);
    update<P extends Tree>(params: P, grads: Tree): P;
    readonly step: number;
    readonly learningRate: number;
    readonly state: Optimizer["state"];
    reset(): void;
  }
  /** `init * decayRate ** step`. */
  function exponentialDecay(init: number, decayRate: number): (step: number) => number;
  /** `init * decayRate ** floor(step / stepSize)`. */
  function stepDecay(init: number, decayRate: number, stepSize: number): (step: number) => number;
  /** From `init` to `end` (default 0) along half a cosine over `decaySteps` steps, then `end`. */
  function cosineDecay(init: number, decaySteps: number, end?: number): (step: number) => number;
  /** From `init` to `end` in a line over `steps` steps, then `end`. */
  function linearSchedule(init: number, end: number, steps: number): (step: number) => number;
  /** `schedules[i + 1]` once the step reaches `boundaries[i]`, counting its steps from there. */
  function joinSchedules(
    schedules: readonly ((step: number) => number)[],
    boundaries: readonly number[],
  ): (step: number) => number;
}

/** What {@link profile} recorded. Times are `performance.now()` milliseconds. */
export interface Profile<T = unknown> {
  value: T;
  wallMs: number;
  /** Each CPU op that ran: its name, output shape and stream index. */
  cpu: { op: string; shape: number[]; stream: number; startMs: number; endMs: number }[];
  gpu: {
    submitMs: number;
    doneMs: number;
    /** From timestamp queries; `null` where the adapter has no `timestamp-query`. */
    gpuMs: number | null;
    /** Each dispatch's kernel, and the op and output shape of the node that recorded it. */
    dispatches: { kernel: string; op: string; shape: number[]; ms: number | null }[];
  }[];
  /** Each copy between the devices: a readback when its data arrived, an upload when it was
   * queued. */
  transfers: { to: DeviceName; bytes: number; atMs: number }[];
}

/** Calls `fn` (which may return a promise) and resolves to what ran where, and when. */
export function profile<T>(fn: () => T | Promise<T>): Promise<Profile<Awaited<T>>>;

// ---------------------------------------------------------------------------------------------
// Memory: MLX's names
// ---------------------------------------------------------------------------------------------

/** Bytes held by live arrays and blocks on both devices (a copy on each device counts twice). */
export function getActiveMemory(): number;
/** The highest active bytes since start or the last reset. */
export function getPeakMemory(): number;
/** Makes every peak its current value. */
export function resetPeakMemory(): void;
/** Bytes of idle GPU buffers kept for reuse (what {@link clearCache} frees). */
export function getCacheMemory(): number;
/**
 * Sets the budget for active memory (`Infinity` removes it) and returns the previous one. An
 * allocation past it trims the cache, lets go of copies the other device can re-derive, waits
 * for in-flight work, retries, and only then throws a `MemoryLimitError`; no live array is lost
 * or corrupted.
 */
export function setMemoryLimit(bytes: number): number;
/** The memory limit, `Infinity` when none is set. */
export function getMemoryLimit(): number;
/** Bounds the cache's bytes and returns the previous bound; `0` disables caching. */
export function setCacheLimit(bytes: number): number;
/** Destroys every idle cached buffer. */
export function clearCache(): void;
/** MLX's `set_wired_limit`: kept and returned; a browser has no residency control. */
export function setWiredLimit(bytes: number): number;

/** A `memoryStats()` gauge: `{metric}.{pool}.{field}`. */
export type MemoryGaugeKey = `${
  | "allocation"
  | "segment"
  | "active"
  | "inactive_split"
  | "allocated_bytes"
  | "reserved_bytes"
  | "active_bytes"
  | "inactive_split_bytes"
  | "requested_bytes"}.${"all" | "large_pool" | "small_pool" | "cpu" | "gpu"}.${"current" | "peak" | "allocated" | "freed"}`;

/** Every key of {@link memoryStats}: PyTorch's, plus the transfer counters. */
export type MemoryStatKey =
  | MemoryGaugeKey
  | "num_alloc_retries"
  | "num_ooms"
  | "num_sync_all_streams"
  | "num_device_alloc"
  | "num_device_free"
  | "num_cache_hits"
  | "num_cache_misses"
  | "transfer_bytes.cpu_to_gpu"
  | "transfer_bytes.gpu_to_cpu";

/** Every statistic under PyTorch's flat key names (`torch.accelerator.memory_stats`). */
export function memoryStats(): Record<MemoryStatKey, number>;
/** The statistics as a table, like `torch.cuda.memory_summary()`. */
export function memorySummary(): string;

/** One record of {@link memorySnapshot}. */
export interface MemoryBlock {
  /** The block's id (as the history names it); `null` for a free range. */
  id: number | null;
  device: DeviceName;
  usage: "storage" | "readback" | "uniform" | "query-resolve" | null;
  size: number;
  requestedSize: number;
  /** The GPU buffer the block is carved from; `null` for host copies. */
  segment: number | null;
  /** Where in its buffer the block starts, in bytes. */
  offset: number;
  /** A live block, an idle buffer, or a free range of a buffer in use. */
  state: "active" | "cached" | "inactive";
  stream: string | null;
  op: string;
  /** What keeps an active block that no array of the page may hold: `"compile"` for an array
   * a compiled function's trace holds (one its function closed over or made from data; its
   * numbers are kept as words, not arrays), `"runtime"` for the runtime's own buffers (the
   * parameter ring, timestamp resolves); otherwise `null`. */
  owner: "compile" | "runtime" | null;
}

/** One record per live block and per free range of a GPU buffer. */
export function memorySnapshot(): MemoryBlock[];
/** `total` is the memory limit (or the `gpu` device's `totalMemory` without one); `free` is
 * `total` less active memory. */
export function getMemoryInfo(): { free: number; total: number };
/** Makes every peak its current value (PyTorch's `reset_peak_memory_stats`). */
export function resetPeakMemoryStats(): void;
/** Restarts totals and event counters from zero. */
export function resetAccumulatedMemoryStats(): void;

// ---------------------------------------------------------------------------------------------
// Memory: PyTorch's and torch_npu's names
// Each takes a device, "cpu" or "gpu" (or a stream), and covers both without one.
// ---------------------------------------------------------------------------------------------

/** `memory_allocated`: bytes of live blocks. */
export function memoryAllocated(device?: StreamLike): number;
/** `max_memory_allocated`. */
export function maxMemoryAllocated(device?: StreamLike): number;
/** `memory_reserved`: bytes of live and cached buffers. */
export function memoryReserved(device?: StreamLike): number;
/** `max_memory_reserved`. */
export function maxMemoryReserved(device?: StreamLike): number;
/** The older name of {@link memoryReserved}. */
export function memoryCached(device?: StreamLike): number;
/** The older name of {@link maxMemoryReserved}. */
export function maxMemoryCached(device?: StreamLike): number;
/** `empty_cache`: the same as {@link clearCache}. */
export function emptyCache(): void;
/** The allocated peak becomes its current value, for the device or every scope. */
export function resetMaxMemoryAllocated(device?: StreamLike): void;
/** The reserved peak becomes its current value, for the device or every scope. */
export function resetMaxMemoryCached(device?: StreamLike): void;

/** {@link memoryStats} nested at its dots. */
export interface NestedMemoryStats {
  [key: string]: number | NestedMemoryStats;
}

/** `memory_stats_as_nested_dict`. */
export function memoryStatsAsNestedDict(device?: StreamLike): NestedMemoryStats;
/** Sets the memory limit to `fraction` (in (0, 1]) of the device's `totalMemory`. */
export function setPerProcessMemoryFraction(fraction: number, device?: StreamLike): void;

/** {@link getDeviceProperties}' answer. */
export interface DeviceProperties {
  name: string;
  vendor: string;
  architecture: string;
  /** Bytes: the RAM the browser reports (`navigator.deviceMemory`) or the adapter's
   * `maxBufferSize`; a page can know no more. */
  totalMemory: number;
  maxBufferSize: number | null;
  maxStorageBufferBindingSize: number | null;
  maxComputeWorkgroupSizeX: number | null;
  maxComputeInvocationsPerWorkgroup: number | null;
  features: string[];
  /** How `smi()` measures `utilization.gpu`; `null` without a GPU. */
  utilizationFrom: "timestamp-query" | "submit-to-done" | null;
}

/** `get_device_properties`: the `gpu` device's without an argument. */
export function getDeviceProperties(device?: StreamLike): DeviceProperties;

/** A raw block of {@link cachingAllocatorAlloc}. */
export class Block {
  private constructor();
  /** The bytes asked for. */
  readonly bytes: number;
  /** The bytes held: the request rounded to its pool's granularity, or more. */
  readonly size: number;
  /** Where the block starts in `buffer`, in bytes (a multiple of 256); 0 for a CPU block. */
  readonly offset: number;
  /** The allocator's id of the block, as the history and snapshots name it. */
  readonly id: number;
  /** Where its memory is. Without WebGPU a `gpu` stream's block is host memory, so `device`
   * is `"cpu"` while `stream.device` is `"gpu"`. */
  readonly device: DeviceName;
  readonly stream: Stream;
  /** Whether it has been deleted. */
  readonly deleted: boolean;
  /**
   * The `GPUBuffer` the block is a range of (`STORAGE | COPY_SRC | COPY_DST`), `null` on the
   * CPU or once deleted. Other blocks may share it: bind `{buffer, offset, size}`, and bind
   * blocks that may share a buffer all as `storage` in one dispatch.
   */
  readonly buffer: GPUBuffer | null;
  /** Deletes the block, as {@link cachingAllocatorDelete} does. */
  free(): void;
  [Symbol.dispose](): void;
}

/** `caching_allocator_alloc`: a raw block from the cache, counted like an array's storage. */
export function cachingAllocatorAlloc(bytes: number, opts?: StreamOptions): Block;
/** `caching_allocator_delete`: gives the block back; twice is a `ValueError`. */
export function cachingAllocatorDelete(block: Block): void;
/** The runtime's `GPUDevice`, for a page's own WGSL on raw blocks; `null` without WebGPU. */
export function gpuDevice(): GPUDevice | null;
/** `change_current_allocator`: only while no array or raw block holds memory. */
export function changeCurrentAllocator(policy: "best-fit" | "exact" | "none"): void;

// ---------------------------------------------------------------------------------------------
// Monitor and history
// ---------------------------------------------------------------------------------------------

/** A field of `nvidia-smi --query-gpu`. */
export type SmiField =
  | "timestamp"
  | "name"
  | "driver_version"
  | "pci.bus_id"
  | "pstate"
  | "pcie.link.gen.max"
  | "pcie.link.gen.current"
  | "temperature.gpu"
  | "utilization.gpu"
  | "utilization.memory"
  | "memory.total"
  | "memory.used"
  | "memory.free";

/** {@link smi}'s sample: numbers in the field's unit (MiB, %), `"[N/A]"` where a browser
 * cannot know. */
export type SmiSample = Record<SmiField, string | number>;

/** Options of {@link smi}. */
export interface SmiOptions {
  /** The sample period of the utilizations, in ms (1000 by default, at most 60,000). */
  periodMs?: number;
}

/** Options of {@link smi} that make it print nvidia-smi's CSV text. */
export interface SmiCsvOptions extends SmiOptions {
  /** Comma-separated fields (all of them without one). */
  query?: string;
  format: "csv" | "csv,noheader" | "csv,nounits" | "csv,noheader,nounits";
}

/** The fields of `nvidia-smi --query-gpu`, measured over the last `periodMs`. */
export function smi(opts?: SmiOptions): SmiSample;
/** The text `nvidia-smi --query-gpu=… --format=…` would print. */
export function smi(opts: SmiCsvOptions): string;

/** Options of {@link recordMemoryHistory}. */
export interface MemoryHistoryOptions {
  /** `false` stops recording (keeping the events to read). */
  enabled?: boolean;
  /** The ring's size (100,000 by default). */
  maxEntries?: number;
  /** Keep the JS stack of each allocating call. */
  stacks?: boolean;
}

/** One allocator event of {@link memoryHistory}. */
export interface MemoryEvent {
  action:
    | "alloc"
    | "free_requested"
    | "free_completed"
    | "segment_alloc"
    | "segment_free"
    | "cache_hit"
    | "oom";
  id: number;
  bytes: number;
  device: DeviceName;
  stream: string | null;
  op: string;
  timeMs: number;
  stack?: string;
}

/** PyTorch's `_record_memory_history`: starts (or stops) recording the allocator's events. */
export function recordMemoryHistory(opts?: MemoryHistoryOptions): void;
/** The events recorded, oldest first. */
export function memoryHistory(): MemoryEvent[];

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The kinds of error tandem throws (and promises reject with), by their `name`. */
export type ErrorName =
  | "ShapeError"
  | "DTypeError"
  | "MemoryLimitError"
  | "DisposedArrayError"
  | "DeviceError"
  | "ValueError";

/**
 * An error of tandem's: a JS `Error` whose `name` says the kind and whose message names the op,
 * its inputs and what was expected. A bad call never breaks the module.
 */
export interface TandemError extends Error {
  name: ErrorName;
}

/**
 * Shapes that do not fit together (broadcasting, matmul, reshape, data against its shape).
 * Each error class tests the error's `name`, so `instanceof` works on every error tandem
 * throws or rejects with:
 *
 * ```ts
 * try { tn.add(tn.zeros([2, 3]), tn.zeros([4])); }
 * catch (e) { if (e instanceof tn.ShapeError) console.log(e.message); else throw e; }
 * ```
 */
export class ShapeError extends Error {
  name: "ShapeError";
}
/** A dtype the op does not take (`neg` of a bool array, a random array of `int32`). */
export class DTypeError extends Error {
  name: "DTypeError";
}
/** An allocation past the memory limit, after the runtime trimmed, waited and retried; or a
 * buffer past the adapter's limits. Every live array is intact. */
export class MemoryLimitError extends Error {
  name: "MemoryLimitError";
}
/** An array used after `dispose()`. */
export class DisposedArrayError extends Error {
  name: "DisposedArrayError";
}
/** No usable device: a call before `initRuntime()`, `requireGpu` without WebGPU, a lost device,
 * an error the GPU reported. */
export class DeviceError extends Error {
  name: "DeviceError";
}
/** An argument the call does not take: an unknown option, a bad axis or count, `item()` of many
 * elements. */
export class ValueError extends Error {
  name: "ValueError";
}

declare global {
  // Empty when @webgpu/types is absent, so the package compiles either way; with it, these
  // merge with its full declarations.
  interface GPUBuffer {}
  interface GPUDevice {}
}
