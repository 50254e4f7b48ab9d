// scatterAdd's landing for scatter.wgsl (a gather's gradient): the float32 update is added to
// the element, so updates that land on one element all count. WGSL has no float atomics, so
// each adds by a compare-exchange loop on the element's bits; the order of the additions is
// the hardware's, so sums of many may differ in the last bits from one run to the next (as on
// every GPU scatter-add).

@group(0) @binding(3) var<storage, read_write> out: array<atomic<u32>>;

fn land(slot: u32, value: u32) {
    let addend = bitcast<f32>(value);
    var old = atomicLoad(&out[slot]);
    loop {
        let sum = bitcast<u32>(bitcast<f32>(old) + addend);
        let swapped = atomicCompareExchangeWeak(&out[slot], old, sum);
        if (swapped.exchanged) {
            break;
        }
        old = swapped.old_value;
    }
}
