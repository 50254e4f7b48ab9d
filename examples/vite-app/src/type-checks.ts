// Compile-time checks of the package's types: `tsc --noEmit` (run by `cargo xtask test`) fails
// if a result dtype, a typed array or an options object is typed wrongly. Nothing here runs,
// and nothing imports this file.
import * as tn from "tandem";
import { var as variance } from "tandem";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expect<T extends true>(): T | undefined {
  return undefined;
}

export async function checks(): Promise<void> {
  const info: tn.RuntimeInfo = await tn.initRuntime({ memoryLimit: 2 ** 28, requireGpu: false });
  const f = tn.array([[1, 2], [3, 4]]);
  const i = tn.arange(4, { dtype: "int32" });
  const u = tn.array([1, 2, 3, 4], { dtype: "uint32" });
  const b = tn.array([true, false]);
  const typed = tn.array(new Int32Array([1, 2]));
  const empty = tn.array([]);
  const emptyRows = tn.array([[], []]);
  expect<Equal<typeof empty, tn.NDArray<"float32">>>();
  expect<Equal<typeof emptyRows, tn.NDArray<"float32">>>();
  expect<Equal<typeof f, tn.NDArray<"float32">>>();
  expect<Equal<typeof i, tn.NDArray<"int32">>>();
  expect<Equal<typeof u, tn.NDArray<"uint32">>>();
  expect<Equal<typeof b, tn.NDArray<"bool">>>();
  expect<Equal<typeof typed, tn.NDArray<"int32">>>();

  // The model ops: `var` under a new name or as `tn.var`, `tn.fast.*`, scans and indexing.
  expect<Equal<ReturnType<typeof variance<"int32">>, tn.NDArray<"float32">>>();
  expect<Equal<ReturnType<typeof variance<"bfloat16">>, tn.NDArray<"bfloat16">>>();
  expect<Equal<typeof tn.var, typeof variance>>();
  const normed = tn.fast.layerNorm(f, null, null, 1e-5, { stream: "gpu" });
  expect<Equal<typeof normed, tn.NDArray<"float32">>>();
  expect<Equal<ReturnType<typeof tn.cumsum<"bool">>, tn.NDArray<"int32">>>();
  const picked = tn.take(i, [0, -1], { axis: 0 });
  expect<Equal<typeof picked, tn.NDArray<"int32">>>();
  expect<Equal<ReturnType<typeof tn.floorDivide<typeof i, typeof i>>, tn.NDArray<"int32">>>();
  // @ts-expect-error: takeAlongAxis takes an array of indices, not numbers
  tn.takeAlongAxis(f, [0]);

  // tidy takes a synchronous function; an async one is a type error (and a ValueError).
  const kept = tn.tidy(() => tn.exp(f));
  expect<Equal<typeof kept, tn.NDArray<"float32">>>();
  const pair = tn.tidy(() => [f.add(1), 3] as const);
  expect<Equal<typeof pair, readonly [tn.NDArray<"float32">, 3]>>();
  // @ts-expect-error: tidy's function must not be async.
  tn.tidy(async () => tn.exp(f));
  // @ts-expect-error: nor return a promise.
  tn.tidy(() => f.toArray());

  // compile: unannotated parameters are arrays; numbers are annotated.
  const layer = tn.compile((x) => tn.exp(x));
  // Its argument may be of any dtype, so exp's result is one of the float dtypes.
  expect<Equal<ReturnType<typeof layer>, tn.NDArray<tn.FloatDType>>>();
  const scale = tn.compile((x: tn.NDArray, s: number) => tn.multiply(x, s));
  scale(f, 2);
  // @ts-expect-error: a number where the compiled function takes an array.
  layer(3);
  layer.dispose();

  // Results carry the dtype each op gives.
  expect<Equal<ReturnType<typeof tn.add<typeof i, typeof u>>, tn.NDArray<"int32">>>();
  expect<Equal<typeof f.add extends (o: number) => tn.NDArray<"float32"> ? true : false, true>>();
  const sum = tn.sum(tn.greater(f, 2));
  expect<Equal<typeof sum, tn.NDArray<"int32">>>();
  expect<Equal<ReturnType<typeof tn.argmax>, tn.NDArray<"uint32">>>();
  // Integer division is float32; a float16 array keeps its dtype.
  const quotient = tn.divide(i, u);
  expect<Equal<typeof quotient, tn.NDArray<"float32">>>();
  const halves = tn.astype(f, "float16");
  expect<Equal<typeof halves.mean, (opts?: tn.ReduceOptions) => tn.NDArray<"float16">>>();
  expect<Equal<ReturnType<typeof tn.sqrt<"float16">>, tn.NDArray<"float16">>>();
  expect<Equal<ReturnType<typeof tn.sum<"int8">>, tn.NDArray<"int32">>>();
  const cast = f.astype("uint32", { stream: "cpu" });
  expect<Equal<typeof cast, tn.NDArray<"uint32">>>();
  const viewed = tn.transpose(tn.reshape(i, [2, 2]), { stream: "gpu" });
  expect<Equal<typeof viewed, tn.NDArray<"int32">>>();
  const parts = tn.split(i, 2);
  expect<Equal<typeof parts, tn.NDArray<"int32">[]>>();

  // Reads are typed by dtype.
  const ints: Int32Array = await i.toArray();
  const flags: Uint8Array = await b.toArray();
  const value: boolean = await tn.array(true).item();
  const unknown = await tn.array([1]).astype(info.gpu ? "int32" : "float32").toArray();
  expect<Equal<typeof unknown, Int32Array | Float32Array>>();

  // Options are checked: a typo is an error, as it is at run time.
  // @ts-expect-error `stram` is not an option
  tn.exp(f, { stram: "gpu" });
  // @ts-expect-error a device must be "cpu" or "gpu"
  tn.exp(f, { stream: "tpu" });
  // @ts-expect-error argmax takes one axis
  tn.argmax(f, { axis: [0, 1] });
  tn.sum(f, { axis: [0, 1], keepdims: true, stream: tn.newStream("gpu") });
  tn.slice(f, [0, 0], [2, 2], { stream: "cpu" });

  // Memory statistics have PyTorch's keys.
  const stats = tn.memoryStats();
  const active: number = stats["active_bytes.all.current"];
  // @ts-expect-error not a key of memoryStats()
  void stats["active_bytes.everything.current"];
  // The error classes narrow what a catch holds.
  try {
    tn.add(f, tn.zeros([5]));
  } catch (e) {
    if (e instanceof tn.ShapeError) {
      const name: "ShapeError" = e.name;
      void name;
    }
  }
  // The function transforms: gradients take the tree shape of their argument.
  const loss = (p: { w: tn.NDArray; b: tn.NDArray[] }, x: tn.NDArray) => tn.sum(tn.matmul(x, p.w));
  const gradTree = tn.grad(loss)({ w: f, b: [f] }, f);
  const gw: tn.NDArray = gradTree.w;
  const gb: tn.NDArray[] = gradTree.b;
  const [lossValue, gx] = tn.valueAndGrad(loss, { argnums: 1 })({ w: f, b: [] }, f);
  const lossArray: tn.NDArray = lossValue;
  const gxArray: tn.NDArray = gx;
  const both: tn.Tree[] = tn.grad(loss, { argnums: [0, 1] })({ w: f, b: [] }, f);
  // @ts-expect-error argnums is a number or a list of numbers
  tn.grad(loss, { argnums: "w" });
  const adam = new tn.optimizers.Adam({ learningRate: tn.optimizers.cosineDecay(1e-3, 100) });
  const next = adam.update({ w: f, b: [f] }, gradTree);
  const nextW: tn.NDArray = next.w;
  // @ts-expect-error the learning rate is required
  new tn.optimizers.SGD({ momentum: 0.9 });
  const csv: string = tn.smi({ format: "csv" });
  const sample: tn.SmiSample = tn.smi();
  void [ints, flags, value, active, csv, sample, parts, gw, gb, lossArray, gxArray, both, nextW];
}
