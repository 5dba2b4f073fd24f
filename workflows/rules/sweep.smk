# prepare: each dataset split once per repetition; exact: the exact baseline of each
# (dataset, kernel, repetition), once, for every run job to load; run: one job per
# (dataset, kernel, sampler, repetition) covering every task, rank and λ, so each sampler
# fit serves all tasks.
# Failed cells are recorded in their files (status error/timeout/oom) and do not fail the
# workflow: `kbench run` exits 1 for them, 2 for a real usage error.

wildcard_constraints:
    rep=r"\d+",
    kernel=r"[^/]+",
    dataset=r"[^/]+",
    sampler=r"[^/]+",


rule prepare:
    output:
        OUT / "data" / f"{{dataset}}_rep{{rep}}_seed{config['seed']}.npz",
    log:
        OUT / "logs" / "prepare" / "{dataset}_rep{rep}.log",
    params:
        spec=lambda wc: spec_of("datasets", wc.dataset),
        seed=config["seed"],
        cache=OUT / "data",
    resources:
        mem_mb=RESOURCES.get("mem_mb", 4000),
        runtime=RESOURCES.get("runtime", 30),
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench prepare --datasets {params.spec:q} --only-repetition {wildcards.rep:q} "
        "--seed {params.seed:q} --data-cache {params.cache:q} > {log:q} 2>&1"


rule exact:
    input:
        lambda wc: SWEEP.split_file(spec_of("datasets", wc.dataset), int(wc.rep)),
    output:
        SWEEP.exact_pattern(),
    log:
        OUT / "logs" / "exact" / "{kernel}" / "{dataset}_rep{rep}.log",
    params:
        dataset=lambda wc: spec_of("datasets", wc.dataset),
        kernel=lambda wc: SWEEP.kernels_by_slug()[wc.kernel],
        max_n=EXACT_MAX_N,
        seed=config["seed"],
        cache=OUT / "data",
    resources:
        mem_mb=RESOURCES.get("mem_mb", 4000),
        runtime=RESOURCES.get("runtime", 30),
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench prepare --datasets {params.dataset:q} --only-repetition {wildcards.rep:q} "
        "--seed {params.seed:q} --data-cache {params.cache:q} --exact {params.kernel:q} "
        "--exact-max-n {params.max_n:q} > {log:q} 2>&1"


rule run:
    input:
        lambda wc: SWEEP.split_file(spec_of("datasets", wc.dataset), int(wc.rep)),
        lambda wc: SWEEP.exact_file(spec_of("datasets", wc.dataset), SWEEP.kernels_by_slug()[wc.kernel],
                                    int(wc.rep)),
    output:
        expand(SWEEP.cell_pattern(), task=TASK_SLUGS, rank=config["ranks"], allow_missing=True),
    log:
        OUT / "logs" / "run" / "{kernel}" / "{dataset}" / "{sampler}_rep{rep}.log",
    params:
        dataset=lambda wc: spec_of("datasets", wc.dataset),
        sampler=lambda wc: spec_of("samplers", wc.sampler),
        tasks=",".join(config["tasks"]),
        ranks=",".join(map(str, config["ranks"])),
        lams=",".join(map(str, config["lams"])),
        kernel=lambda wc: SWEEP.kernels_by_slug()[wc.kernel],
        repetitions=config["repetitions"],
        timeout=config.get("cell_timeout", 600),
        memory=["--memory-limit", config["memory_limit_mb"]] if "memory_limit_mb" in config else [],
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
        "kbench run --datasets {params.dataset:q} --samplers {params.sampler:q} --tasks {params.tasks:q} "
        "--ranks {params.ranks:q} --lams {params.lams:q} --kernel {params.kernel:q} "
        "--repetitions {params.repetitions:q} --only-repetition {wildcards.rep:q} --seed {params.seed:q} "
        "--cell-timeout {params.timeout:q} {params.memory:q} --data-cache {params.cache:q} "
        "--out {params.out:q} --quiet > {log:q} 2>&1 || test $? -eq 1"
