//! Start-up choices on first use and across page loads (`startup::settle`,
//! `startup::remembered`): the matmul kernel is timed at the first GPU matmul, not at start;
//! what was measured is handed to the page's store, and a runtime given it measures nothing.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;

use tandem::runtime::{Runtime, RuntimeOptions};
use tandem::startup::remembered::Source;
use tandem::startup::settle::Remember;
use tandem::{Array, Device, ops};

type Kept = Rc<RefCell<Vec<(String, String)>>>;

fn runtime(remembered: Vec<(String, String)>, kept: &Kept) -> Runtime {
    let kept = kept.clone();
    let options = RuntimeOptions {
        require_gpu: true,
        remembered,
        remember: Some(Remember(Rc::new(move |key: &str, text: &str| {
            let mut kept = kept.borrow_mut();
            kept.retain(|(k, _)| k != key);
            kept.push((key.to_string(), text.to_string()));
        }))),
        ..Default::default()
    };
    pollster::block_on(Runtime::new(options)).expect("a Vulkan adapter")
}

#[test]
fn the_matmul_kernel_is_chosen_at_the_first_gpu_matmul_and_then_remembered() {
    let kept: Kept = Rc::default();
    let first = runtime(Vec::new(), &kept);
    let info = first.info();
    assert!(info.matmul.is_none(), "nothing timed a matmul at start");
    assert!(!info.exp.as_ref().unwrap().remembered);
    assert_eq!(
        info.default_device_source,
        Source::Measured,
        "llvmpipe is a fallback adapter"
    );
    let text = kept.borrow()[0].1.clone();
    assert!(text.contains("exp=") && text.contains("device="), "{text}");
    assert!(!text.contains("matmul="), "{text}");

    let a = Array::from_f32(&[1.0; 64 * 48], &[64, 48]).unwrap();
    let sum = ops::add(&a, &a, Device::Gpu).unwrap();
    pollster::block_on(first.evaluate(&[sum])).unwrap();
    assert!(first.info().matmul.is_none(), "no matmul yet");
    let product = ops::matmul(
        &a,
        &ops::transpose(&a, None, Device::Gpu).unwrap(),
        Device::Gpu,
    );
    let got = pollster::block_on(first.read_f32(&product.unwrap())).unwrap();
    assert_eq!(got, vec![48.0; 64 * 64]);
    let tuning = first.info().matmul.expect("chosen at the first GPU matmul");
    assert_eq!(tuning.source, Source::Measured);
    assert!(tuning.reason.contains("64x48 @ 48x64"), "{}", tuning.reason);
    let text = kept.borrow()[0].1.clone();
    assert!(
        text.contains(&format!("matmul={}", tuning.kernel.name())),
        "{text}"
    );
    drop(first);

    let pairs = kept.borrow().clone();
    let second = runtime(pairs, &kept);
    let info = second.info();
    assert!(info.exp.as_ref().unwrap().remembered);
    let matmul = info.matmul.expect("remembered");
    assert_eq!(
        (matmul.kernel, matmul.source),
        (tuning.kernel, Source::Remembered)
    );
    assert_eq!(info.default_device_source, Source::Remembered);
    let steps: Vec<(&str, f64)> = info.startup_ms.clone();
    for (step, ms) in steps {
        if step != "device" {
            assert!(ms < 1.0, "{step} took {ms} ms on a remembered adapter");
        }
    }
}
