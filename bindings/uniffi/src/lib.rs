//! `uform-uniffi`: the native library behind the Swift package. Everything here is
//! generated: `generated/uniffi/uform.udl` declares the surface, uniffi's scaffolding implements its FFI, and
//! `generated/uniffi/glue.rs` converts between the uniffi-facing types and `uform-core`.

uniffi::include_scaffolding!("uform");

mod off_thread;
use off_thread::off_thread;

include!("../../../generated/uniffi/glue.rs");

/// The Swift overhead benchmark's peer (hand-written, not generated, not part of the API): a bare no-op exported by
/// the same library, so the benchmark measures `capabilitiesCompiled()` and `drain()` against the cost of a call alone.
#[no_mangle]
pub extern "C" fn uform_bench_noop() {}

#[cfg(test)]
mod tests {
    use super::*;

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
        let executor = Executor::for_ram(Some(ExecutorForRamConfig {
            memory_domains: None,
            cpu_class: None,
            threads: Some(1),
            deferred_limit: None,
            scratch_limit: None,
        }))
        .unwrap();
        let executor = std::sync::Arc::new(executor);
        let mesh = Mesh::bootstrap(executor.clone(), None).unwrap();
        assert!(matches!(executor.free(), Err(UFormError::InUse(_))));
        assert_eq!(mesh.describe().unwrap().host_domain_count, 1);
        drop(mesh);
        executor.free().unwrap();
    }
}
