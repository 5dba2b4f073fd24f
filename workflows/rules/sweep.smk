# prepare: each dataset split once per repetition; run: one job per
# (dataset, sampler, task, repetition) covering its ranks and λ path.
# Failed cells are recorded in their files (status error/timeout/oom) and do not fail the
# workflow: `kbench run` exits 1 for them, 2 for a real usage error.

wildcard_constraints:
    rep=r"\d+",
    kernel=r"[^/]+",
    dataset=r"[^/]+",
    sampler=r"[^/]+",
    task=r"[^/]+",


rule prepare:
    output:
        OUT / "data" / f"{{dataset}}_rep{{rep}}_seed{config['seed']}.npz",
    log:
        OUT / "logs" / "prepare" / "{dataset}_rep{rep}.log",
    params:
        spec=lambda wc: quoted(spec_of("datasets", wc.dataset)),
        seed=config["seed"],
        cache=OUT / "data",
    resources:
        mem_mb=RESOURCES.get("mem_mb", 4000),
        runtime=RESOURCES.get("runtime", 30),
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench prepare --datasets {params.spec} --only-repetition {wildcards.rep} "
        "--seed {params.seed} --data-cache {params.cache} > {log} 2>&1"


rule run:
    input:
        lambda wc: SWEEP.split_file(spec_of("datasets", wc.dataset), int(wc.rep)),
    output:
        expand(SWEEP.cell_pattern(), rank=config["ranks"], allow_missing=True),
    log:
        OUT / "logs" / "run" / "{kernel}" / "{dataset}" / "{sampler}" / "{task}_rep{rep}.log",
    params:
        dataset=lambda wc: quoted(spec_of("datasets", wc.dataset)),
        sampler=lambda wc: quoted(spec_of("samplers", wc.sampler)),
        task=lambda wc: quoted(spec_of("tasks", wc.task)),
        ranks=",".join(map(str, config["ranks"])),
        lams=",".join(map(str, config["lams"])),
        kernel=lambda wc: quoted(SWEEP.kernels_by_slug()[wc.kernel]),
        repetitions=config["repetitions"],
        timeout=config.get("cell_timeout", 600),
        memory=f"--memory-limit {config['memory_limit_mb']}" if "memory_limit_mb" in config else "",
        seed=config["seed"],
        cache=OUT / "data",
        out=OUT,
    resources:
        mem_mb=RESOURCES.get("mem_mb", 4000),
        runtime=RESOURCES.get("runtime", 30),
        cpus_per_task=RESOURCES.get("cpus_per_task", 1),
    group:
        "sweep"
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench run --datasets {params.dataset} --samplers {params.sampler} --tasks {params.task} "
        "--ranks {params.ranks} --lams {params.lams} --kernel {params.kernel} "
        "--repetitions {params.repetitions} --only-repetition {wildcards.rep} --seed {params.seed} "
        "--cell-timeout {params.timeout} {params.memory} --data-cache {params.cache} "
        "--out {params.out} --quiet > {log} 2>&1 || test $? -eq 1"
