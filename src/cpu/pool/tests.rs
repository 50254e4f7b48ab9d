use super::*;
use std::sync::atomic::AtomicU64;

#[test]
fn every_part_runs_once_whoever_claims_it() {
    start_native(2);
    for parts in [0, 1, 2, 3, 7, 64, 1000] {
        let counts: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(0)).collect();
        run(parts, &|k| {
            counts[k].fetch_add(1, SeqCst);
        });
        assert!(counts.iter().all(|c| c.load(SeqCst) == 1), "{parts} parts");
    }
}

#[test]
fn parts_fill_disjoint_runs_of_the_output() {
    start_native(2);
    for (len, per) in [(0, 4), (1, 4), (10, 3), (1 << 16, 1000), (12345, 4096)] {
        let mut out = vec![u32::MAX; len];
        fill_parts(&mut out, per, |start, run| {
            for (i, v) in run.iter_mut().enumerate() {
                *v = (start + i) as u32;
            }
        });
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == i as u32),
            "{len} by {per}"
        );
    }
}

#[test]
fn a_job_inside_a_part_and_jobs_from_many_callers_run_whole() {
    start_native(2);
    let callers: Vec<_> = (0..4)
        .map(|c| {
            std::thread::spawn(move || {
                let total = AtomicU64::new(0);
                for _ in 0..200 {
                    run(3, &|k| {
                        // A nested job runs on the thread that submits it.
                        run(4, &|j| {
                            total.fetch_add((c * 100 + k * 10 + j) as u64, SeqCst);
                        });
                    });
                }
                total.load(SeqCst)
            })
        })
        .collect();
    for (c, caller) in callers.into_iter().enumerate() {
        let per_job: u64 = (0..3)
            .flat_map(|k| (0..4).map(move |j| (c * 100 + k * 10 + j) as u64))
            .sum();
        assert_eq!(caller.join().unwrap(), 200 * per_job);
    }
}

#[test]
fn a_panicking_part_panics_its_caller() {
    start_native(2);
    let caught = std::panic::catch_unwind(|| {
        run(8, &|k| assert!(k != 5, "part five fails"));
    });
    assert!(caught.is_err());
    // The pool still runs the next job.
    let total = AtomicU64::new(0);
    run(8, &|k| {
        total.fetch_add(k as u64, SeqCst);
    });
    assert_eq!(total.load(SeqCst), 28);
}

#[test]
fn small_work_stays_in_one_part() {
    start_native(2);
    assert_eq!(parts_for(100), 1);
    assert!(parts_for(1 << 24) > 1);
    assert_eq!(rows_per_part(1, 1 << 30), 1);
    assert_eq!(part_len(10, 1, 4) % 4, 0);
}
