"""What ``kbench advise`` answers for: the task the user names, or by default the one the
data's target calls for (krr for a numeric target, classification for classes), and the
kernel. Light to import: the command line reads its defaults here."""

from __future__ import annotations

from kbench.datasets.base import UNLABELED_ON_REQUEST
from kbench.registry import create

#: the kernel advised on by default: a validated bandwidth, as the published real-data sweep's
ADVISE_KERNEL = "gaussian:sigma=cv"
#: ``--task auto``: krr or classification by the target's type
AUTO_TASK = "auto"
#: the task ``auto`` takes per task type
BY_TASK_TYPE = {"regression": "krr", "binary": "classification", "multiclass": "classification"}


def advisable_task(label: str):
    """The task of ``label``, if advice can be given for it: a λ-path task with an exact
    headline and a validation criterion to choose λ on."""
    try:
        task = create(label, "task")
    except ValueError:
        task = None
    if (task is None or not task.uses_lams or task.headline is None or task.headline.exact is None
            or task.validation is None):
        raise ValueError("kbench advise answers for λ-path tasks scored against the exact kernel "
                         f"that choose λ on validation rows (krr, classification, or {AUTO_TASK}: "
                         f"the one the target calls for), not {label!r}.")
    return task


def resolve_task(label: str, task_type: str | None, dataset: str, numeric_target: bool = True,
                 target_ignored: str | None = None) -> str:
    """The task advice is for on data of ``task_type`` (None: not known yet, before loading):
    ``auto`` resolved, a task that cannot take that data refused, naming the one that can
    (and the other reading of the target, where there is one: classes of numbers read as
    numbers, not True/False or text); ``target_ignored``: why loaded data has no target."""
    if task_type == "unlabeled" and target_ignored and target_ignored != UNLABELED_ON_REQUEST:
        raise ValueError(f"{dataset} has no target to advise on: {target_ignored}.")
    if label == AUTO_TASK:
        if task_type is None:
            return label
        if task_type not in BY_TASK_TYPE:
            raise ValueError(f"{dataset} has no target ({task_type}); kbench advise needs one: a "
                             "table's spec names its column with target=<column> (and no "
                             "task_type=unlabeled), an .npz file holds it as its array 'y'.")
        return BY_TASK_TYPE[task_type]
    task = advisable_task(label)
    if task_type is not None and task_type not in task.accepts:
        fits, other = (BY_TASK_TYPE.get(task_type),
                       "classification" if task_type == "regression" else "regression")
        reread = other == "classification" or numeric_target
        raise ValueError(f"--task {label} needs {' or '.join(task.accepts)} data; {dataset} is "
                         f"{task_type}"
                         + (f": pass --task {fits} (or --task {AUTO_TASK})" if fits else "")
                         + (", or give the dataset the task_type that reads its target as you mean "
                            f"(task_type={other})." if fits and reread else "."))
    return label
