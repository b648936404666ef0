"""The scheduler library's English sentences, recognised again and shown in French; Slurm's
own words and unknown texts untouched."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from babel.messages.pofile import read_po

from app import i18n
from app.i18n import _
from app.scheduler import directive_values, errors, validation
from app.scheduler.directives import read_directives
from app.scheduler.messages import message_ids, translate


def _french(text: str) -> str:
    with i18n.use_locale("fr"):
        return translate(text, _)


def test_every_marked_sentence_has_a_french_translation() -> None:
    with (i18n.LOCALES_DIR / "fr" / "LC_MESSAGES" / "messages.po").open("rb") as source:
        catalog = read_po(source, locale="fr")
    missing = [
        message
        for message in message_ids()
        if catalog.get(message) is None or not catalog.get(message).string  # type: ignore[union-attr]
    ]
    assert not missing


@pytest.mark.parametrize(
    ("script", "french"),
    [
        ("#SBATCH --tme=5", "sbatch n'a pas d'option --tme (vouliez-vous dire --time\u202f?)"),
        ("#SBATCH -y", "sbatch n'a pas d'option -y"),
        ("#SBATCH --mem", "--mem demande une valeur"),
        ("#SBATCH --hold=1", "--hold ne prend pas de valeur"),
        ("#SBATCH --job-name 'x", "un guillemet ' n'est jamais fermé"),
        ("#SBATCH time", "'time' n'est pas une option (les options commencent par - ou --)"),
        ("#SBATCH --no", "--no est ambiguë\u00a0: --no-kill ou --no-requeue ou --nodefile ou"),
    ],
)
def test_what_sbatch_would_refuse_in_a_script_reads_in_french(script: str, french: str) -> None:
    [problem] = read_directives(f"#!/bin/bash\n{script}\n").errors
    assert _french(problem.message).startswith(french)
    assert translate(problem.message, _) == problem.message


@pytest.mark.parametrize(
    ("parse", "text", "french"),
    [
        (directive_values.time_minutes, "demain", "Valeur de --time invalide\u00a0: 'demain'"),
        (directive_values.memory_mb, "beaucoup", "Valeur de mémoire invalide\u00a0: 'beaucoup'"),
        (
            directive_values.node_count,
            "x",
            "Valeur de --nodes invalide\u00a0: 'x' (p. ex. 2 ou 1-4)",
        ),
        (directive_values.array_tasks, "5-1", "5-1 est décroissant\u202f; écrivez le plus petit"),
        (directive_values.array_tasks, "1-4%0", "%0 ne laisserait aucune tâche s'exécuter"),
        (directive_values.array_tasks, "1-4:0", "1-4:0 a un pas de 0"),
        (directive_values.array_tasks, "x", "utilisez des numéros de tâches comme 1-10"),
    ],
)
def test_values_sbatch_would_refuse_read_in_french(
    parse: Callable[[str], int], text: str, french: str
) -> None:
    with pytest.raises(ValueError) as refused:
        parse(text)
    assert _french(str(refused.value)).startswith(french)


def test_spec_checks_and_a_script_list_read_in_french() -> None:
    with pytest.raises(errors.InvalidSpec) as refused:
        validation.resolve_log_path("/etc/passwd", ("/home",))
    assert _french(refused.value.message) == "est hors des dossiers permis"
    listed = "sbatch would refuse this script: line 2: --mem needs a value; line 3: -y x"
    assert _french(listed) == (
        "sbatch refuserait ce script\u00a0: ligne 2\u00a0: --mem demande une valeur\u202f; "
        "ligne 3\u00a0: -y x"
    )


def test_slurms_refusals_are_explained_in_french_and_its_words_kept() -> None:
    rejected = errors.classify_sbatch_error("sbatch: error: Invalid account or account/partition")
    assert _french(rejected.message) == "Le compte n'existe pas ou vous n'en êtes pas membre."
    unknown = errors.classify_sbatch_error("sbatch: unrecognized option '--tme=5'")
    assert _french(unknown.message).startswith("Sbatch n'a pas d'option --tme (vouliez-vous")
    other = errors.classify_sbatch_error("sbatch: error: Batch job submission failed: Zorglub")
    assert _french(other.message) == other.message == "Batch job submission failed: Zorglub"
    assert _french("100% of nothing") == "100% of nothing"
