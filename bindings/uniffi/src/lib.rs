//! `uform-uniffi`: the native library behind the Swift package. Everything here is
//! generated: `generated/uniffi/uform.udl` declares the surface, uniffi's scaffolding made from it by
//! `cargo xtask codegen` (`generated/uniffi/uform.uniffi.rs`) implements its FFI, and `generated/uniffi/glue.rs`
//! converts between the uniffi-facing types and `uform-core`.

include!("../../../generated/uniffi/uform.uniffi.rs");

mod off_thread;
use off_thread::off_thread;

include!("../../../generated/uniffi/glue.rs");

/// The Swift overhead benchmark's peer (hand-written, not generated, not part of the API): a bare no-op exported by
/// the same library, so the benchmark measures `capabilitiesCompiled()` and `drain()` against the cost of a call alone.
#[no_mangle]
pub extern "C" fn uform_bench_noop() {}

/// The Swift benchmark's matrix (hand-written, not generated, not part of the API): `rows` x `columns` floats, the
/// `i`-th being `i`, lowered as a verb's result is, so `uform-swift-bench` times `FfiConverterTypeF32Matrix_lift` on
/// a buffer the library built. The caller owns the buffer (the lift frees it).
#[no_mangle]
pub extern "C" fn uform_bench_f32_matrix(rows: u32, columns: u32) -> uniffi::RustBuffer {
    let data = (0..rows as usize * columns as usize).map(|i| i as f32).collect();
    <F32Matrix as uniffi::Lower<UniFfiTag>>::lower(F32Matrix { data, rows, columns })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An executor of the calling thread alone, as the generated Swift makes one with `ExecutorForRamConfig(threads: 1)`.
    fn one_thread_executor() -> Executor {
        Executor::for_ram(Some(ExecutorForRamConfig {
            memory_domains: None,
            cpu_class: None,
            threads: Some(1),
            deferred_limit: None,
            scratch_limit: None,
        }))
        .unwrap()
    }

    /// What a verb's matrix result is once the scaffolding lowered it: the bytes of the `RustBuffer` Swift lifts.
    fn lowered(matrix: F32Matrix) -> Vec<u8> {
        let Ok(buffer) = <F32Matrix as uniffi::LowerReturn<UniFfiTag>>::lower_return(matrix) else {
            panic!("a matrix always lowers")
        };
        buffer.destroy_into_vec()
    }

    /// The header generated/swift/Sources/UForm/F32Matrix.swift reads, then exactly the floats' native-endian bytes.
    #[test]
    fn a_matrix_crosses_as_its_native_endian_floats_after_a_twelve_byte_header() {
        let data = vec![1.5f32, -0.0, f32::MIN_POSITIVE, -3.25e7, f32::INFINITY, 0.1];
        let bytes = lowered(F32Matrix { data: data.clone(), rows: 2, columns: 3 });
        assert_eq!(F32_MATRIX_HEADER, 12);
        assert_eq!(bytes.len(), 12 + 4 * data.len());
        assert_eq!(bytes[0..4], (8 + 4 * data.len() as i32).to_be_bytes(), "uniffi's big-endian length of `bytes`");
        assert_eq!(bytes[4..8], 2u32.to_ne_bytes());
        assert_eq!(bytes[8..12], 3u32.to_ne_bytes());
        let floats: Vec<u8> = data.iter().flat_map(|f| f.to_ne_bytes()).collect();
        assert_eq!(bytes[12..], floats[..]);

        let empty = lowered(F32Matrix { data: vec![], rows: 0, columns: 384 });
        assert_eq!(empty[..4], 8i32.to_be_bytes());
        assert_eq!(empty[4..], [0u32.to_ne_bytes(), 384u32.to_ne_bytes()].concat());
    }

    #[test]
    fn a_matrix_lifts_back_and_a_malformed_one_is_refused() {
        use uniffi::{Lift, Lower};
        let matrix = F32Matrix { data: (0..12).map(|i| i as f32 * 0.5).collect(), rows: 4, columns: 3 };
        let buffer = <F32Matrix as Lower<UniFfiTag>>::lower(matrix.clone());
        assert_eq!(<F32Matrix as Lift<UniFfiTag>>::try_lift(buffer).unwrap(), matrix);

        // Nested, as in a record or a list: the length frames it and the reader stops after it.
        let mut nested = Vec::new();
        <F32Matrix as Lower<UniFfiTag>>::write(matrix.clone(), &mut nested);
        nested.push(7);
        let mut reader = nested.as_slice();
        assert_eq!(<F32Matrix as Lift<UniFfiTag>>::try_read(&mut reader).unwrap(), matrix);
        assert_eq!(reader, [7]);

        let good = lowered(matrix);
        let refused = |bytes: Vec<u8>| {
            let mut reader = bytes.as_slice();
            <F32Matrix as Lift<UniFfiTag>>::try_read(&mut reader).is_err()
        };
        assert!(refused(good[..good.len() - 1].to_vec()), "a short buffer");
        let mut wrong_shape = good.clone();
        wrong_shape[4..8].copy_from_slice(&5u32.to_ne_bytes());
        assert!(refused(wrong_shape), "rows x columns other than the length says");
        assert!(refused(good[..11].to_vec()), "a cut header");
    }

    // The scaffolding's export of `Model.encode_text` (blocking; Swift calls its async twin, whose future completes
    // with the same lowered result), declared as uniffi's header does.
    extern "C" {
        fn uniffi_uform_uniffi_fn_method_model_encode_text(
            model: u64,
            texts: uniffi::RustBuffer,
            options: uniffi::RustBuffer,
            status: &mut uniffi::RustCallStatus,
        ) -> uniffi::RustBuffer;
    }

    /// A verb's matrix through the scaffolding itself: the exported `encode_text` on the test model
    /// (`UFORM_TEST_MODEL_DIR`, which `cargo xtask test rust` sets) hands back the header and then exactly the
    /// embedding's floats, native-endian.
    #[test]
    fn encode_text_through_the_scaffolding_hands_back_the_bulk_layout() {
        use uniffi::Lower;
        let Some(dir) = std::env::var_os("UFORM_TEST_MODEL_DIR") else {
            panic!("this test needs the test model: run it with `cargo xtask test rust`, or set UFORM_TEST_MODEL_DIR")
        };
        let executor = Arc::new(one_thread_executor());
        let config = ModelLoadRamConfig {
            executor: Some(executor.clone()),
            memory_domains: None,
            precision: None,
            revision: None,
        };
        let model = Arc::new(Model::load_ram(dir.to_string_lossy().into_owned(), Some(config)).unwrap());
        let texts = vec!["a cat on a mat".to_string(), "two dogs".to_string(), "x".to_string()];
        let expected = model.encode_text(texts.clone(), None).unwrap();
        assert_eq!((expected.rows, expected.columns), (3, 384));

        let mut status = uniffi::RustCallStatus::default();
        let handle = <Arc<Model> as Lower<UniFfiTag>>::lower(model.clone()).as_raw();
        let texts = <Vec<String> as Lower<UniFfiTag>>::lower(texts);
        let options = <Option<EncodeTextOptions> as Lower<UniFfiTag>>::lower(None);
        // SAFETY: the arguments are lowered as the scaffolding lifts them; the handle is a fresh reference it consumes.
        let buffer = unsafe { uniffi_uform_uniffi_fn_method_model_encode_text(handle, texts, options, &mut status) };
        assert_eq!(status.code, uniffi::RustCallStatusCode::Success);
        let bytes = buffer.destroy_into_vec();
        let floats: Vec<u8> = expected.data.iter().flat_map(|f| f.to_ne_bytes()).collect();
        assert_eq!(bytes[..4], (8 + floats.len() as i32).to_be_bytes());
        assert_eq!(bytes[4..8], 3u32.to_ne_bytes());
        assert_eq!(bytes[8..12], 384u32.to_ne_bytes());
        assert_eq!(bytes[12..], floats[..]);
        drop(model);
        executor.free().unwrap();
    }

    // The scaffolding's export of `Executor.drain`, declared as uniffi's header does: the mood is an `int32_t`.
    extern "C" {
        fn uniffi_uform_uniffi_fn_method_executor_drain(executor: u64, mood: i32, status: &mut uniffi::RustCallStatus);
    }

    /// An enum crosses as the number C uses for its case: an argument by value, a record's field as uniffi writes an
    /// `i32` (big-endian); a number that names no case is refused, never turned into a case.
    #[test]
    fn an_enum_crosses_as_its_c_number() {
        use uniffi::{Lift, Lower};
        assert_eq!(<Mood as Lower<UniFfiTag>>::lower(Mood::Parked), 0);
        assert_eq!(<Mood as Lower<UniFfiTag>>::lower(Mood::Spinning), 1);
        assert_eq!(<GpuVendor as Lower<UniFfiTag>>::lower(GpuVendor::Apple), 3);
        assert_eq!(<MultimemTier as Lower<UniFfiTag>>::lower(MultimemTier::PeerRead), 1);
        assert_eq!(<Residency as Lift<UniFfiTag>>::try_lift(1).unwrap(), Residency::Vram);
        for refused in [-1, 2, i32::MAX] {
            assert!(<Mood as Lift<UniFfiTag>>::try_lift(refused).is_err(), "{refused}");
        }
        let mut nested = Vec::new();
        <GpuVendor as Lower<UniFfiTag>>::write(GpuVendor::Amd, &mut nested);
        assert_eq!(nested, 2i32.to_be_bytes());
        let mut reader = nested.as_slice();
        assert_eq!(<GpuVendor as Lift<UniFfiTag>>::try_read(&mut reader).unwrap(), GpuVendor::Amd);
        assert!(reader.is_empty());
        assert!(<GpuVendor as Lift<UniFfiTag>>::try_read(&mut &[0u8, 0, 0][..]).is_err(), "a cut value");
    }

    /// `Executor.drain` through the scaffolding itself, as the generated Swift calls it: a clone of the handle and the
    /// mood's number. A number that names no mood fails the call and leaves the executor usable.
    #[test]
    fn drain_through_the_scaffolding_takes_the_mood_by_value() {
        use uniffi::Lower;
        let executor = Arc::new(one_thread_executor());
        let drain = |mood: i32| {
            let mut status = uniffi::RustCallStatus::default();
            let handle = <Arc<Executor> as Lower<UniFfiTag>>::lower(executor.clone()).as_raw();
            // SAFETY: the handle is a fresh reference the scaffolding consumes; the mood is passed by value.
            unsafe { uniffi_uform_uniffi_fn_method_executor_drain(handle, mood, &mut status) };
            status.code
        };
        assert_eq!(drain(1), uniffi::RustCallStatusCode::Success);
        assert_eq!(drain(0), uniffi::RustCallStatusCode::Success);
        assert_ne!(drain(5), uniffi::RustCallStatusCode::Success);
        assert_eq!(drain(0), uniffi::RustCallStatusCode::Success);
        assert_eq!(Arc::strong_count(&executor), 1, "every clone the calls took was released");
        executor.free().unwrap();
    }

    #[test]
    fn the_benchmark_matrix_is_lowered_as_a_result_is() {
        let buffer = uform_bench_f32_matrix(3, 2);
        let bytes = buffer.destroy_into_vec();
        assert_eq!(bytes, lowered(F32Matrix { data: (0..6).map(|i| i as f32).collect(), rows: 3, columns: 2 }));
    }

    #[test]
    fn a_panic_becomes_the_internal_error() {
        let result: Result<(), UFormError> = guard(|| panic!("boom"));
        match result {
            Err(UFormError::Internal(message)) => assert!(message.contains("boom"), "{message}"),
            other => panic!("expected Internal, got {other:?}"),
        }
    }

    #[test]
    fn every_core_kind_keeps_its_kind_and_message() {
        for kind in uform_core::ErrorKind::ALL {
            let error: UFormError = uform_core::Error::new(kind, format!("`x` is {}", kind.code())).into();
            assert_eq!(format!("{error:?}").split('(').next().unwrap().to_lowercase(), kind.code().replace('_', ""));
            assert_eq!(error.to_string(), format!("`x` is {}", kind.code()));
        }
    }

    #[test]
    fn absent_config_means_all_absent_and_records_round_trip() {
        let options = MeshOptions {
            host_domain_index: Some(1),
            host_domain_count: Some(2),
            gpus_per_multimem_domain: None,
            directory: Some("/d".into()),
            job: Some("j".into()),
            timeout_seconds: Some(3),
            group: Some("staff".into()),
        };
        let core: uform_core::MeshOptions = options.clone().into();
        assert_eq!(MeshOptions::from(core), options);
        assert_eq!(
            uform_core::MeshOptions::from(MeshOptions::from(uform_core::MeshOptions::default())),
            uform_core::MeshOptions::default()
        );
    }

    #[test]
    fn a_mesh_keeps_its_executor_alive_and_dropping_frees() {
        let executor = std::sync::Arc::new(one_thread_executor());
        let mesh = Mesh::bootstrap(executor.clone(), None).unwrap();
        assert!(matches!(executor.free(), Err(UFormError::InUse(_))));
        assert_eq!(mesh.describe().unwrap().host_domain_count, 1);
        drop(mesh);
        executor.free().unwrap();
    }
}
