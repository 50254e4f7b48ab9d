// putAlongAxis's landing for scatter.wgsl: the update replaces the element. Of two updates to
// one element, one lands (which is unspecified, as on every GPU scatter without atomics).

@group(0) @binding(3) var<storage, read_write> out: array<u32>;

fn land(slot: u32, value: u32) {
    out[slot] = value;
}
