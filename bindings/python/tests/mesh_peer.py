"""One peer of a multi-process mesh: joins, prints its description as JSON, then leaves.

Usage: python mesh_peer.py DIRECTORY JOB INDEX COUNT TIMEOUT
"""

from __future__ import annotations

import json
import sys

import uform


def main() -> None:
    directory, job, index, count, timeout = sys.argv[1:6]
    with uform.Executor.for_ram(threads=1) as executor:
        with uform.Mesh.bootstrap(
            executor,
            directory=directory,
            job=job,
            host_domain_index=int(index),
            host_domain_count=int(count),
            timeout_seconds=int(timeout),
        ) as mesh:
            d = mesh.describe()
            print(
                json.dumps(
                    {
                        "host_domain_index": d.host_domain_index,
                        "host_domain_count": d.host_domain_count,
                        "gpus": len(d.gpus),
                        "gpus_per_multimem_domain": d.gpus_per_multimem_domain,
                        "multimem_domain_count": d.multimem_domain_count,
                        "multimem_tier": d.multimem_tier.value,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
