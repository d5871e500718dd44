"""Word tables for the clause analysis in :mod:`cortex_lsp.intent.intent` (English, German, French,
Spanish): verb forms mapped to a canonical lemma and a tense, negators, mood markers and fillers.

Only tables live here (built once at import, read-only); the analysis is in :mod:`cortex_lsp.intent.clauses`.
The English negation and clause-joining groups are also what the memory polarity analysis
(:mod:`cortex_lsp.intent.self_talk`) reads: one list of cue words for both.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = [
    "CLAUSE_NEGATORS",
    "CLAUSE_NEGATORS_EN",
    "COND_MARKERS",
    "CONTENT_NOUNS",
    "CONTENT_OPENERS",
    "CONTRAST_PHRASES_EN",
    "COORDINATORS",
    "COORDINATORS_EN",
    "CREATE_VERBS",
    "DETERMINERS",
    "DISLIKE_VERBS_EN",
    "FILE_NOUNS",
    "FILLERS",
    "INTERROGATIVE_STARTS",
    "LOOSE_JOINERS_EN",
    "MIDCLAUSE_QUESTION",
    "NEGATION_STEMS",
    "NEGATION_WORDS",
    "NEGATORS_EN",
    "PAST_AUX",
    "PAST_TIME",
    "POLITE_STARTS",
    "PRECEDING_NEGATORS",
    "REASON_MARKERS",
    "REPLACE_VERBS",
    "REQUEST_MARKERS",
    "SAVE_VERBS",
    "SOURCE_PREPS",
    "SPLITTERS",
    "SPLITTERS_EN",
    "SUBJECT_PRONOUNS",
    "VERBS",
    "strip_accents",
]


def strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


# form -> (lemma, tense); tense is "base" | "past" | "gerund"
VERBS: dict[str, tuple[str, str]] = {}

#: lemmas whose targets may be created
CREATE_VERBS = frozenset({"save", "write", "create", "append"})
#: lemmas whose targets may be replaced when they exist
REPLACE_VERBS = frozenset({"replace", "update", "overwrite", "append", "fix"})
#: lemmas that ask for a file even when the user names none
SAVE_VERBS = frozenset({"save"})


def _add(lemma: str, base: Iterable[str], past: Iterable[str] = (), gerund: Iterable[str] = ()) -> None:
    for tense, forms in (("base", base), ("past", past), ("gerund", gerund)):
        for form in forms:
            VERBS.setdefault(form, (lemma, tense))
    for tense, forms in (("base", base), ("past", past), ("gerund", gerund)):
        for form in forms:
            VERBS.setdefault(strip_accents(form), (lemma, tense))


def _en(lemma: str, *bases: str, irregular_past: Iterable[str] = ()) -> None:
    for b in bases:
        stem = b[:-1] if b.endswith("e") and not b.endswith("ee") else b
        third = b + "es" if b.endswith(("s", "sh", "ch", "x", "z")) else b + "s"
        if b.endswith("y") and b[-2:-1] not in "aeiou":
            third = b[:-1] + "ies"
            past = [b[:-1] + "ied"]
        elif b.endswith("e"):
            past = [b + "d"]
        elif b in ("jot", "put", "dump", "run", "set", "drop", "log", "stop", "plan"):
            past = [b + b[-1] + "ed"] if b not in ("put", "set", "run") else []
        else:
            past = [b + "ed"]
        double = b in ("jot", "put", "run", "set", "drop", "log", "stop")
        gerund = b + b[-1] + "ing" if double else stem + "ing"
        _add(lemma, [b, third], [*past, *irregular_past], [gerund])


def _de(lemma: str, stem: str, *, past: Iterable[str] = (), extra: Iterable[str] = (), ge: bool = True) -> None:
    e = "" if stem.endswith("e") else "e"
    base = [stem, stem + e, stem + "t", stem + "n" if stem.endswith(("er", "el")) else stem + "en",
            stem + "st", stem + "et", *extra]
    participle = ["ge" + stem + "t"] if ge else []
    _add(lemma, base, [*participle, stem + "te", stem + "ten", *past])


def _fr(lemma: str, stem: str, *, extra: Iterable[str] = (), past: Iterable[str] = ()) -> None:
    base = [stem + s for s in ("e", "es", "ez", "er", "ons", "ent")]
    part = [stem + s for s in ("é", "ée", "és", "ées")]
    _add(lemma, [*base, *extra], [*part, *past])


def _es(lemma: str, stem: str, *, extra: Iterable[str] = (), past: Iterable[str] = ()) -> None:
    base = [stem + s for s in ("a", "e", "es", "ad", "en", "ar")]
    part = [stem + s for s in ("ado", "ada", "ados", "adas", "é", "ó", "aste", "aron")]
    _add(lemma, [*base, *extra], [*part, *past])


# --- English -------------------------------------------------------------------------------------
_en("save", "save", "store", "export", "dump", "jot", "backup", "persist", "stash")
_en("write", "write", "put", "record", "output", "copy", "log", irregular_past=("wrote", "written"))
_add("write", ["writes"], gerund=["writing"])
_en("create", "create", "make", "generate", "produce", irregular_past=("made",))
_en("replace", "replace", "substitute")
_en("update", "update", "modify", "edit", "change", "rewrite", irregular_past=("rewrote", "rewritten"))
_en("fix", "fix", "debug", "correct", "refactor", "improve")
_en("overwrite", "overwrite", "clobber", irregular_past=("overwrote", "overwritten"))
_en("append", "append", "extend", "add")
_en("delete", "delete", "remove", "erase", "wipe", "destroy", "purge", "unlink", "shred", "nuke", "trash")
_en("rename", "rename")
_en("move", "move", "relocate")
_en("run", "run", "execute", "exec", "rerun", "test", irregular_past=("ran",))
_en("fetch", "fetch", "download", "browse", "scrape", "crawl", "google")
_en("read", "read", "open", "show", "display", "view", "cat", "print")
_en("list", "list")
_en("search", "search", "find", "grep", "locate", irregular_past=("found",))
_en("compute", "compute", "calculate", "evaluate", "multiply", "divide")
_en("remember", "remember", "memorize", "memorise", "learn")
_en("explain", "explain", "describe", "tell", "teach", irregular_past=("told", "taught"))
_en("summarize", "summarize", "summarise", "condense")
_en("translate", "translate")

# --- German --------------------------------------------------------------------------------------
_de("save", "speicher")
_de("save", "abspeicher")
_add("save", ["sichere", "sichern"], ["gesichert"])
_de("save", "exportier", ge=False)
_de("save", "notier", ge=False)
_de("save", "ablege", past=["abgelegt"], extra=["ablegen"])
_de("write", "schreib", past=["schrieb", "schrieben", "geschrieben"], extra=["schreiben"], ge=False)
_de("write", "aufschreib", past=["aufgeschrieben"], extra=["aufschreiben"], ge=False)
_de("create", "erstell", ge=False)
_de("create", "erzeug", ge=False)
_de("create", "generier", ge=False)
_de("create", "anleg", past=["angelegt"], ge=False)
_de("replace", "ersetz", ge=False)
_de("update", "aktualisier", ge=False)
_de("update", "änder", past=["geändert"])
_de("update", "bearbeit", ge=False, past=["bearbeitet"])
_de("update", "ergänz", ge=False)
_de("overwrite", "überschreib", past=["überschrieb", "überschrieben"], extra=["überschreiben"], ge=False)
_de("append", "anhäng", past=["angehängt"], ge=False)
_de("append", "hinzufüg", past=["hinzugefügt"], ge=False)
_de("delete", "lösch")
_de("delete", "entfern", ge=False)
_de("rename", "umbenenn", past=["umbenannt"], ge=False)
_de("move", "verschieb", past=["verschoben"], extra=["verschieben"], ge=False)
_de("run", "ausführ", past=["ausgeführt"], ge=False)
_de("run", "führ", past=["geführt"])
_add("run", ["starte", "startet"], ["gestartet"])
_de("fetch", "abruf", past=["abgerufen"], ge=False)
_de("fetch", "herunterlad", past=["heruntergeladen"], ge=False)
_de("fetch", "lad", past=["geladen"])
_de("read", "les", past=["gelesen", "las"], extra=["lies", "lest"], ge=False)
_de("read", "öffn", extra=["öffne", "öffnen"])
_de("read", "zeig")
_de("list", "aufliste", extra=["auflisten", "liste"])
_de("search", "such")
_de("search", "find", past=["gefunden", "fand"], ge=False)
_de("compute", "berechn", extra=["berechne", "berechnen"], ge=False)
_de("compute", "rechn", extra=["rechne", "rechnen"])
_de("remember", "merk")
_de("explain", "erklär", ge=False)
_de("summarize", "fass", past=["gefasst", "zusammengefasst"], extra=["zusammenfassen"])
_de("translate", "übersetz", ge=False)

# --- French --------------------------------------------------------------------------------------
_fr("save", "enregistr")
_fr("save", "sauvegard")
_fr("save", "sauv")
_fr("save", "stock")
_fr("save", "export")
_add("save", ["notez", "noter"], ["noté", "notée"])
_fr("save", "gard")
_add("write", ["écris", "écrivez", "écrire", "écrivons", "écrit", "écrivent"],
     ["écrite", "écrits", "écrites", "écrivit"])
_fr("write", "consign")
_add("create", ["crée", "crées", "créez", "créer", "créons", "créent"], ["créé", "créée", "créés", "créées"])
_fr("create", "génér", extra=["génère", "générez", "générer"])
_add("create", ["fais", "faites", "faire"], ["fait", "faite"])
_fr("replace", "remplac", extra=["remplaçons"])
_fr("overwrite", "écras")
_fr("update", "modifi")
_fr("update", "actualis")
_fr("update", "chang", extra=["changeons"])
_fr("append", "ajout")
_fr("delete", "supprim")
_fr("delete", "effac")
_fr("rename", "renomm")
_fr("move", "déplac", extra=["déplaçons"])
_fr("run", "exécut")
_fr("run", "lanc")
_fr("fetch", "télécharg")
_fr("fetch", "récupér", extra=["récupère", "récupères"])
_add("read", ["lis", "lisez", "lire", "lisons"], ["lu", "lue"])
_add("read", ["ouvre", "ouvrez", "ouvrir", "ouvres"], ["ouvert", "ouverte"])
_fr("read", "affich")
_fr("read", "montr")
_fr("list", "list")
_fr("search", "cherch")
_fr("search", "recherch")
_fr("search", "trouv")
_fr("compute", "calcul")
_fr("remember", "mémoris")
_add("remember", ["retiens", "retenez", "retenir", "souviens"], ["retenu"])
_fr("explain", "expliqu")
_fr("summarize", "résum")
_fr("translate", "tradui", extra=["traduis", "traduisez", "traduire"])

# --- Spanish -------------------------------------------------------------------------------------
_es("save", "guard")
_es("save", "almacen")
_es("save", "salv")
_es("save", "grab")
_es("save", "export")
_es("save", "anot")
_add("write", ["escribe", "escriba", "escribas", "escribid", "escriban", "escribir", "escribo"],
     ["escrito", "escrita", "escribí", "escribió", "escribiste"])
_add("create", ["crea", "cree", "crees", "cread", "creen", "crear"],
     ["creado", "creada", "creé", "creó", "creaste"])
_es("create", "gener")
_add("create", ["haz", "haga", "hacer"], ["hecho", "hice", "hizo"])
_es("replace", "reemplaz", extra=["reemplace", "reemplaces", "reemplacen"], past=["reemplacé"])
_add("replace", ["sustituye", "sustituya", "sustituyas", "sustituir"], ["sustituido", "sustituí"])
_es("update", "actualiz", extra=["actualice", "actualices", "actualicen"], past=["actualicé"])
_es("update", "modific", extra=["modifique", "modifiques", "modifiquen"], past=["modifiqué"])
_es("update", "edit")
_es("update", "cambi")
_add("overwrite", ["sobrescribe", "sobrescriba", "sobrescribas", "sobrescribir", "sobreescribe", "sobreescribas",
                   "sobreescribir"],
     ["sobrescrito", "sobreescrito", "sobrescribí"])
_add("append", ["añade", "añada", "añadas", "añadir", "añadan"], ["añadido", "añadí"])
_es("append", "agreg", extra=["agregue", "agregues", "agreguen"])
_es("delete", "borr")
_es("delete", "elimin")
_es("rename", "renombr")
_add("move", ["mueve", "mueva", "mover"], ["movido", "moví"])
_es("run", "ejecut")
_add("run", ["corre", "corra", "correr"], ["corrido"])
_es("fetch", "descarg", extra=["descargue"])
_add("fetch", ["obtén", "obtenga", "obtener"], ["obtenido"])
_add("read", ["lee", "lea", "leer"], ["leído", "leí", "leyó"])
_add("read", ["abre", "abra", "abrir"], ["abierto", "abrí"])
_add("read", ["muestra", "muestre", "mostrar"], ["mostrado"])
_es("list", "list")
_es("search", "busc", extra=["busque"], past=["busqué"])
_add("search", ["encuentra", "encuentre", "encontrar"], ["encontrado", "encontré"])
_es("compute", "calcul")
_add("remember", ["recuerda", "recuerde", "recordar"], ["recordado"])
_es("remember", "memoriz", extra=["memorice"])
_es("explain", "explic", extra=["explique"])
_add("summarize", ["resume", "resuma", "resumir"], ["resumido"])
_add("translate", ["traduce", "traduzca", "traducir"], ["traducido"])

# --- Dutch, Portuguese, Italian, Polish, Swedish: the write verbs (imperative and infinitive forms) ---
_add("save", ["sla", "slaat", "opslaan", "bewaar", "bewaren", "salva", "salve", "salvar", "guarde", "grava",
              "grave", "gravar", "salvare", "salvate", "memorizza", "zapisz", "zapisać", "zachowaj", "spara",
              "sparar"],
     ["opgeslagen", "bewaard", "salvou", "salvei", "gravou", "salvato", "salvata", "zapisałem", "zapisał",
      "sparade", "sparat"])
_add("write", ["schrijf", "schrijven", "escreve", "escreva", "escrever", "scrivi", "scriva", "scrivere", "napisz",
               "skriv", "skriva"],
     ["geschreven", "escreveu", "scritto", "napisałem", "skrev", "skrivit"])
_add("create", ["maak", "maken", "cria", "crie", "criar", "crea", "creare", "stwórz", "utwórz", "skapa"],
     ["gemaakt", "criou", "creato", "utworzyłem", "skapade"])
_add("update", ["wijzig", "wijzigen", "aanpassen", "bewerk", "bewerken", "update", "atualiza", "atualize",
                "atualizar", "altera", "altere", "alterar", "edita", "edite", "editar", "modifica", "modifichi",
                "modificare", "aggiorna", "aggiornare", "cambia", "zmień", "zaktualizuj", "edytuj", "ändra",
                "uppdatera", "redigera"],
     ["gewijzigd", "aangepast", "atualizou", "alterou", "modificato", "aggiornato", "zmieniłem", "ändrade",
      "uppdaterade"])
_add("fix", ["repareer", "verbeter", "corrigeer", "herschrijf", "refactor", "corrige", "corrija", "conserta",
             "conserte", "corrigir", "refatora", "refatore", "correggi", "corregga", "sistema", "aggiusta",
             "correggere", "popraw", "napraw", "poprawić", "rätta", "fixa", "laga", "korrigera",
             "corrige", "corriger", "répare", "réparez", "corrigez", "behebe", "korrigiere", "repariere",
             "corregir", "arregla", "repara"],
     ["gerepareerd", "corrigiu", "corretto", "poprawiłem", "rättade"])
_add("replace", ["vervang", "vervangen", "substitui", "substitua", "substituir", "sostituisci", "sostituire",
                 "zastąp", "ersätt"],
     ["vervangen", "substituiu", "sostituito", "ersatte"])
_add("overwrite", ["overschrijf", "overschrijven", "sobrescreve", "sobrescreva", "sobrescrever", "sovrascrivi",
                   "sovrascrivere", "nadpisz"],
     ["overschreven", "sobrescreveu", "sovrascritto", "nadpisałem"])
_add("append", ["voeg", "toevoegen", "adiciona", "adicione", "acrescenta", "acrescente", "aggiungi", "aggiunga",
                "dodaj", "dopisz", "lägg"],
     ["toegevoegd", "adicionou", "aggiunto", "dodałem", "lade"])

#: multi-word verbs and idioms, matched on tokens before single words: (tokens, lemma, tense)
PHRASES: tuple[tuple[tuple[str, ...], str, str], ...] = tuple(
    (tuple(p.split()), lemma, tense)
    for p, lemma, tense in (
        ("save over", "overwrite", "base"),
        ("write over", "overwrite", "base"),
        ("write down", "save", "base"),
        ("note down", "save", "base"),
        ("put down", "save", "base"),
        ("back up", "save", "base"),
        ("sum up", "summarize", "base"),
        ("add up", "compute", "base"),
        ("adds up", "compute", "base"),
        ("add together", "compute", "base"),
        ("total up", "compute", "base"),
        ("tally up", "compute", "base"),
        ("look up", "search", "base"),
        ("look at", "read", "base"),
        ("keep in mind", "remember", "base"),
        ("mettre à jour", "update", "base"),
        ("mets à jour", "update", "base"),
        ("mettez à jour", "update", "base"),
        ("met à jour", "update", "base"),
        ("mis à jour", "update", "past"),
        ("mettre a jour", "update", "base"),
        ("mets a jour", "update", "base"),
        ("mettez a jour", "update", "base"),
        ("merk dir", "remember", "base"),
        ("merken sie sich", "remember", "base"),
        ("souviens toi", "remember", "base"),
        ("souvenez vous", "remember", "base"),
        ("what does it print", "run", "base"),
        ("what does this print", "run", "base"),
        ("what does it output", "run", "base"),
        ("what does this code print", "run", "base"),
        ("what does this code output", "run", "base"),
        ("what would it print", "run", "base"),
    )
)

# --- English cue groups: the clause analysis below and the memory polarity analysis
# (:func:`cortex_lsp.intent.self_talk.polar_segments`) read the same words
#: negate what follows them ("don't" arrives here as "do not": :mod:`cortex_lsp.intent.tokens`)
NEGATORS_EN = ("not", "never", "no", "without", "nor", "neither", "cannot")
#: negate their whole clause ("nothing to save", "nobody asked")
CLAUSE_NEGATORS_EN = ("nothing", "none", "nowhere", "nobody")
#: "instead of", "rather than": what follows is not what is meant
CONTRAST_PHRASES_EN: tuple[tuple[str, ...], ...] = (("instead", "of"), ("rather", "than"))
#: verbs of dislike: a fact about liking that they carry is the opposite one ("I hate Java")
DISLIKE_VERBS_EN = (
    "hate", "hates", "hated", "hating", "dislike", "dislikes", "disliked", "detest", "detests",
    "loathe", "loathes", "avoid", "avoids", "avoided", "refuse", "refuses",
)
#: words that start a new clause
SPLITTERS_EN = ("but", "however", "although", "though", "whereas", "while")
#: joining words
COORDINATORS_EN = ("and", "then", "also", "or")
#: joining words that only loosely join (a new clause about the user may follow: "…, so I …")
LOOSE_JOINERS_EN = ("yet", "so", "plus", "because")

#: negate a verb that follows them in the clause
PRECEDING_NEGATORS = frozenset(NEGATORS_EN) | frozenset(
    "avoid refrain stop dont doesnt didnt cant wont shouldnt mustnt "
    "ohne ne sans sin nunca jamás jamas tampoco ni não nao nem niet nooit non mai inte aldrig nigdy".split()
)
#: negate every verb of their clause, wherever they stand ("speichere die Datei nicht")
CLAUSE_NEGATORS = frozenset(CLAUSE_NEGATORS_EN) | frozenset(
    "nicht nie niemals kein keine keinen keinem keiner keines nichts pas jamais rien aucun aucune "
    "nada ningún ningun ninguno ninguna".split()
)
#: every word that negates, in the languages the words are read in: the clause analysis's negators
#: (without the verbs "avoid", "refrain", "stop") and the further languages of the asked label
#: (:mod:`cortex_lsp.guards.asked`: Portuguese, Dutch, Italian, Swedish, Polish)
NEGATION_WORDS = (PRECEDING_NEGATORS - {"avoid", "refrain", "stop"}) | CLAUSE_NEGATORS | frozenset(
    "nothing none neither nor cannot dont nie niemals nichts ohne ne pas jamais rien sans nunca nada sin "
    "jamás jamas tampoco não nao nem niet nooit geen niets zonder non mai niente senza inte aldrig ingen "
    "inget utan nigdy bez".split()
)
#: negating words read with any ending ("keine", "aucune", "ninguna", "nenhuma", "nessuno", "żadnego")
NEGATION_STEMS = ("kein", "aucun", "ningún", "ningun", "nenhum", "nessun", "żadn", "zadn")

#: "instead of", "rather than" and their kin negate the verb after them
NEGATING_PHRASES = (
    *CONTRAST_PHRASES_EN, ("anstatt",), ("statt",), ("au", "lieu", "de"),
    ("plutôt", "que"), ("en", "lugar", "de"), ("en", "vez", "de"), ("no", "files"), ("no", "file"),
    ("no", "changes"), ("no", "edits"),
)
#: "don't forget to", "vergiss nicht" ... : a double negation, a request
FORGET = frozenset("forget vergiss vergesst vergessen oublie oubliez olvides olvide olvidéis".split())

#: a sentence starting like this is a request even with a question mark
POLITE_STARTS: tuple[tuple[str, ...], ...] = tuple(
    tuple(p.split())
    for p in (
        "could you", "can you", "would you", "will you", "would you mind", "could you please",
        "can you please", "would you please", "please could you", "please can you", "kindly",
        "kannst du", "könntest du", "können sie", "könnten sie", "würdest du", "würden sie",
        "magst du", "peux tu", "pouvez vous", "pourrais tu", "pourriez vous", "voudrais tu",
        "voudriez vous", "puedes", "podrías", "podrias", "podría", "podria", "puede usted",
        "podéis", "podeis", "pueden",
    )
)
#: a request marker before a verb makes it a request ("I want you to save …", "bitte …")
REQUEST_MARKERS: tuple[tuple[str, ...], ...] = tuple(
    tuple(p.split())
    for p in (
        "please", "pls", "plz", "i want you to", "i'd like you to", "i d like you to", "i would like you to",
        "i need you to", "you need to", "you have to", "you must",
        "i want it", "i want this", "i want the", "i'd like it", "i d like it",
        "i would like it", "i'd like the", "i d like the", "make sure to", "make sure you", "be sure to",
        "you should", "you can", "you may", "go ahead and", "let's", "let s", "lets", "i ask you to",
        "bitte", "ich möchte", "ich will", "ich hätte gern", "ich hätte gerne", "ich brauche",
        "veuillez", "je veux que", "je voudrais", "je souhaite", "merci de", "j'aimerais", "j aimerais",
        "s'il te plaît", "s il te plaît", "s'il vous plaît", "s il vous plaît", "stp", "svp",
        "por favor", "quiero que", "quisiera", "me gustaría", "me gustaria", "necesito que",
    )
)
#: first words of a question (with or without "?")
INTERROGATIVE_STARTS = frozenset(
    "how why what where which who whom whose whether is are am was were does did isn't aren't wasn't "
    "shall should may might has have hasn't haven't "
    "wie warum wieso weshalb was wo wohin woher welche welcher welches welchen wer ob ist sind soll "
    "sollte darf hat habe gibt "
    "comment pourquoi que quoi où ou quel quelle quels quelles qui est-ce "
    "cómo como qué que dónde donde cuál cual cuáles quién quien es está puedo debo debería deberia".split()
)
#: a sentence opening with one of these is a question even without "?"
STRONG_QUESTION_STARTS = frozenset(
    "how why whether what where which who wie warum wieso weshalb wo welche welcher welches ob comment "
    "pourquoi où cómo qué dónde cuál quién".split()
)
#: "can I", "could we" (the user asks about themselves: a question, not a request)
SELF_MODALS = frozenset("can could would will do kann könnte darf puis peux pourrais puedo podría podria".split())
SUBJECT_PRONOUNS = frozenset(
    "i we one it this that they he she my ich wir man es je j nous on il elle yo nosotros "
    "nosotras".split()
)
#: words that turn the rest of the clause into an embedded question ("explain how to save …")
MIDCLAUSE_QUESTION = frozenset(
    "how why whether wie warum wieso weshalb ob comment pourquoi cómo por_qué".split()
)
#: a clause starting with one of these is conditional
COND_MARKERS = frozenset(
    "if unless when whenever once suppose supposing assuming falls wenn sofern sobald "
    "si quand lorsque lorsqu cuando".split()
)
#: a clause starting with one of these gives a reason: what it says is no request
REASON_MARKERS = frozenset("because since as weil da denn parce puisque porque pues ya_que".split())
#: words (and phrases) that start a new clause
SPLITTERS = frozenset(SPLITTERS_EN) | frozenset(
    "aber sondern jedoch mais cependant pero sino aunque".split()
)
#: joining words a clause-initial verb may follow and still be an imperative
COORDINATORS = frozenset(COORDINATORS_EN) | frozenset(
    "und dann auch oder et puis ensuite aussi ou y e luego también tambien o".split()
)
#: words that may stand before an imperative verb
FILLERS = frozenset(
    "please kindly just now then also and so ok okay first next finally afterwards simply quickly hey "
    "go ahead pls plz bitte jetzt dann und auch einfach mal nun noch zuerst danach "
    "et puis ensuite aussi maintenant alors d'abord enfin "
    "y luego después despues también tambien ahora primero finalmente entonces".split()
)
#: a verb right after one of these is a noun ("the export", "my save")
DETERMINERS = frozenset(
    "the a an my your his her our their its this that these those each every any some "
    "der die das den dem des ein eine einen einem einer eines mein meine meinen dein deine "
    "le la les un une mon ma mes ton ta tes son sa ses du "
    "el los las una unos unas mi mis tus su sus del".split()
)
PAST_AUX = frozenset(
    "did was were had has have didn't wasn't weren't hadn't "
    "habe hast hat haben hatte hattest hatten wurde wurden bin bist "
    "ai avons avez ont avait avais étais était "
    "hemos han había habia".split()
)
PAST_TIME = frozenset(
    "yesterday ago earlier previously already last gestern vorhin früher bereits schon "
    "hier déjà deja auparavant ayer anoche antes ya".split()
)
#: nouns that make a write verb without a file name a request for a file ("write it to a file")
FILE_NOUNS = frozenset(
    "file files document datei dateien dokument fichier fichiers archivo archivos documento disk "
    "disque disco csv json spreadsheet tabelle markdown".split()
)
#: a file name right after one of these is read from, not written to
SOURCE_PREPS = frozenset("from of with using von aus mit de du des d avec desde del con".split())
#: "the contents of notes.md": the file after "of" is the one meant
CONTENT_NOUNS = frozenset("content contents text inhalt contenu contenido texto".split())
#: words that open the text to write ("with the text …", "containing …", "about …"): a negation after
#: one is part of that text ("with the text do not disturb"), unless a write verb follows it
CONTENT_OPENERS = frozenset(
    "text content contents containing contains saying says reading about words message line titled "
    "mit dem text inhalt enthält avec le texte contenant sur con el texto contenido sobre".split()
)
#: pronouns a replace verb may use for the file named before ("read notes.md and update it")
FILE_PRONOUNS = frozenset("it this that es sie ihn le la lo".split())
