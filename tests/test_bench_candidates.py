"""The candidate bench's speed-up: reference runs paired with the builds they follow."""

from __future__ import annotations

import pytest

from benchmarks.bench_candidates import main, paired_speedup


def test_the_speed_up_pairs_each_reference_run_with_the_build_before_it():
    # the machine slows by half during the bench; each pair is measured on the same machine: 3.0x
    references, builds = [240.0, 300.0, 360.0], [80.0, 100.0, 120.0]
    assert paired_speedup(references, builds) == pytest.approx(3.0)
    # one reference run at the end against the median build would have said 360 / 100 = 3.6x
    assert paired_speedup([360.0], [120.0]) == pytest.approx(3.0)
    # an even number of pairs: the mean of the middle two ratios (2.5 and 3.5)
    assert paired_speedup([200.0, 350.0, 400.0, 100.0], [100.0, 100.0, 100.0, 50.0]) == pytest.approx(2.75)
    with pytest.raises(ValueError):
        paired_speedup([300.0], [100.0, 90.0])


def test_more_reference_runs_than_builds_is_refused_before_any_work(capsys):
    assert main(["--sizes", "1000", "--repeat", "2", "--reference-repeat", "3"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--reference-repeat: 3 reference runs need as many builds: --repeat is 2" in line
