use super::*;
use crate::error::ErrorKind;

fn store() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("uform-gloo-test-{}-{n}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    dir
}

fn nobody_gone() -> GoneRanks {
    Arc::new(Vec::new)
}

/// Connects `size` groups on threads of this process, runs `each` on every one, and returns what each returned.
fn together<T: Send>(size: usize, each: impl Fn(Group) -> T + Sync) -> Vec<T> {
    let dir = store();
    let out = std::thread::scope(|s| {
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let (dir, each) = (&dir, &each);
                s.spawn(move || {
                    let group =
                        Group::connect(dir, "127.0.0.1", rank, size, Duration::from_secs(20), nobody_gone()).unwrap();
                    each(group)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "the store was left with {left:?}");
    std::fs::remove_dir(&dir).unwrap();
    out
}

#[test]
fn gloo_sums_and_gathers_across_three_processes() {
    let out = together(3, |group| {
        let rank = group.rank();
        let mut data: Vec<f32> = (0..100_003).map(|i| (i % 7) as f32 + rank as f32).collect();
        group.all_reduce_sum(&mut data).unwrap();
        let gathered = group.all_gather(&[rank as u64 * 10, 7]).unwrap();
        (data, gathered)
    });
    for (data, gathered) in out {
        for (i, v) in data.iter().enumerate() {
            assert_eq!(*v, 3.0 * (i % 7) as f32 + 3.0, "element {i}");
        }
        assert_eq!(gathered, vec![0, 7, 10, 7, 20, 7]);
    }
}

#[test]
fn a_peer_that_leaves_breaks_the_group_for_the_others_with_a_named_rank() {
    let out = together(2, |group| {
        if group.rank() == 1 {
            drop(group);
            return None;
        }
        let mut group = group;
        group.gone = Arc::new(|| vec![1]);
        let mut data = vec![1.0f32; 1 << 16];
        let first = group.all_reduce_sum(&mut data).unwrap_err();
        let again = group.all_reduce_sum(&mut data).unwrap_err();
        Some((first, again))
    });
    let (first, again) = out.into_iter().flatten().next().unwrap();
    assert!(matches!(first.kind(), ErrorKind::Conflict | ErrorKind::Timeout), "{first:?}");
    assert!(first.message().contains("rank 1 of the mesh is gone"), "{}", first.message());
    assert_eq!(first, again, "a broken group fails every later collective alike");
}

#[test]
fn a_peer_that_never_connects_is_a_timeout() {
    let dir = store();
    let started = Instant::now();
    let e = Group::connect(&dir, "127.0.0.1", 0, 2, Duration::from_secs(1), Arc::new(|| vec![1])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e:?}");
    assert!(e.message().contains("rank 1 of the mesh is gone"), "{}", e.message());
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "a failed connect left {left:?}");
    std::fs::remove_dir(&dir).unwrap();
}
