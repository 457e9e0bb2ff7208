"""A small invented knowledge base for hop-following tests: films, books and albums, the
people and labels behind them, and distractors that share their words. Every name is made up
for these tests; none comes from an evaluation set."""

from __future__ import annotations


def _doc(doc_id: str, title: str, text: str) -> dict[str, str]:
    return {"id": doc_id, "title": title, "text": text}


DOCS = [
    _doc("mountain-road", "The Mountain Road",
         "The Mountain Road is a 1961 drama film directed by Elias Varga. It follows two "
         "brothers crossing the Carpathians in winter."),
    _doc("blue-harbor", "Blue Harbor",
         "Blue Harbor is a 1958 film directed by Mira Solberg, set in a fishing town on the "
         "west coast."),
    _doc("north-star", "North Star",
         "North Star is a 1965 adventure film directed by Karl Brandt about a polar expedition."),
    _doc("glass-orchard", "The Glass Orchard",
         "The Glass Orchard is a 1972 film directed by Tomas Reyes. It was shot in the Elqui "
         "valley."),
    _doc("elias-varga", "Elias Varga",
         "Elias Varga (4 May 1910 – 2 June 1975) was a Hungarian film director known for "
         "road dramas."),
    _doc("mira-solberg", "Mira Solberg",
         "Mira Solberg (11 July 1915 – 3 March 1969) was a Norwegian director and "
         "screenwriter."),
    _doc("karl-brandt", "Karl Brandt",
         "Karl Brandt (9 January 1920 – 30 August 1990) was a German director and "
         "cinematographer."),
    _doc("tomas-reyes", "Tomas Reyes",
         "Tomas Reyes is a Chilean film director. He is the son of the painter Anselm Reyes."),
    _doc("anselm-reyes", "Anselm Reyes",
         "Anselm Reyes was a Chilean painter born in Valparaíso in 1921. He painted harbour "
         "scenes."),
    _doc("salt-ledger", "The Salt Ledger",
         "The Salt Ledger is a 1979 novel by Irene Castell about a family of salt traders."),
    _doc("winter-cartography", "Winter Cartography",
         "Winter Cartography is a novel by Piet Halvorsen, published in 1961."),
    _doc("lanterns-of-ostra", "Lanterns of Ostra",
         "Lanterns of Ostra is a fantasy novel written by Dana Whitcombe."),
    _doc("irene-castell", "Irene Castell",
         "Irene Castell (born 12 March 1932) is a novelist born in Solvania. She wrote six "
         "novels."),
    _doc("piet-halvorsen", "Piet Halvorsen",
         "Piet Halvorsen (1928 – 2001) was a writer born in Bergen."),
    _doc("dana-whitcombe", "Dana Whitcombe",
         "Dana Whitcombe (born 1947) is a British writer of fantasy fiction."),
    _doc("solvania", "Solvania",
         "Solvania is a small country on the northern sea. Its capital is Merrow."),
    _doc("copper-sky", "Copper Sky",
         "Copper Sky is the second album by The Velvet Pines, released in 1998 by Northgate "
         "Records."),
    _doc("northgate-records", "Northgate Records",
         "Northgate Records is an independent record label founded in 1989 by Harriet Lowe "
         "in Leeds."),
    # Distractors: the same words about other things.
    _doc("red-meadow", "Red Meadow",
         "Red Meadow is a 1960 drama film directed by Lena Fischer about a farming family."),
    _doc("lena-fischer", "Lena Fischer",
         "Lena Fischer (2 February 1912 – 8 October 1980) was a German film director."),
    _doc("silent-pier", "Silent Pier",
         "Silent Pier is a 1959 film directed by Oskar Lund, set in a harbour town."),
    _doc("oskar-lund", "Oskar Lund",
         "Oskar Lund (1905 – 1971) was a Danish film director and actor."),
    _doc("long-winter", "The Long Winter",
         "The Long Winter is a 1964 film directed by Paul Mercer about a mountain village."),
    _doc("paul-mercer", "Paul Mercer",
         "Paul Mercer (1918 – 1985) was a British director who died in London."),
    _doc("copper-clock", "The Copper Clock",
         "The Copper Clock is a 1975 novel by Marta Ilves about a clockmaker's family."),
    _doc("marta-ilves", "Marta Ilves",
         "Marta Ilves (born 1930) is an Estonian novelist born in Tartu."),
    _doc("ledger-of-storms", "Ledger of Storms",
         "Ledger of Storms is a novel by Owen Pryce, published in 1968."),
    _doc("owen-pryce", "Owen Pryce",
         "Owen Pryce (1925 – 1994) was a Welsh novelist who was born in Cardiff."),
    _doc("eastgate-records", "Eastgate Records",
         "Eastgate Records is a record label founded in 1985 by Tom Harker in York."),
    _doc("velvet-road", "Velvet Road",
         "Velvet Road is an album released in 1996 by Eastgate Records."),
    _doc("lucia-reyes", "Lucia Reyes",
         "Lucia Reyes was a Chilean actress born in Concepción in 1940."),
    _doc("norland", "Norland",
         "Norland is a country in the far north. Its capital is Vell."),
    _doc("mountain-film", "Mountain film",
         "A mountain film is a genre of drama film set among peaks and glaciers, popular in "
         "the 1920s and 1930s."),
    _doc("harbor-lights", "Harbor Lights",
         "Harbor Lights is a 1963 film directed by Aldo Ferri about a lighthouse keeper."),
    _doc("aldo-ferri", "Aldo Ferri",
         "Aldo Ferri (1918 – 1999) was an Italian director of melodramas."),
    _doc("star-north", "Northern Star Festival",
         "The Northern Star Festival is a film festival held every winter since 1970."),
    _doc("orchard-glass", "Glass orchards",
         "Glass orchards are greenhouses built for fruit trees in cold climates."),
    _doc("varga-prize", "Varga Prize",
         "The Varga Prize is awarded each year to a first film by a young director."),
    _doc("solberg-fjord", "Solberg Fjord",
         "Solberg Fjord is a fjord on the west coast, known for its fishing towns."),
    _doc("brandt-camera", "Brandt camera",
         "The Brandt camera was a 35 mm film camera made from 1951 to 1967."),
    _doc("salt-trade", "Salt trade",
         "The salt trade carried salt along coastal roads; traders kept ledgers of every sale."),
    _doc("cartography", "Cartography",
         "Cartography is the study and practice of making maps, including winter charts."),
    _doc("velvet-pines", "The Velvet Pines",
         "The Velvet Pines are an indie band from Leeds formed in 1994."),
    _doc("merrow-port", "Merrow Port",
         "Merrow Port handles ferries to the islands of the northern sea."),
    _doc("valparaiso-school", "Valparaíso School",
         "The Valparaíso School was a group of painters who worked on the coast in the 1940s."),
]

# (question, every document its answer needs)
COMPARE = [
    ("Which film has the director who died earlier, The Mountain Road or Blue Harbor?",
     {"mountain-road", "blue-harbor", "elias-varga", "mira-solberg"}),
    ("Whose director was born first, North Star or The Mountain Road?",
     {"north-star", "mountain-road", "karl-brandt", "elias-varga"}),
    ("Which novel's author was born earlier, The Salt Ledger or Winter Cartography?",
     {"salt-ledger", "winter-cartography", "irene-castell", "piet-halvorsen"}),
    ("Are the directors of Blue Harbor and North Star from the same country?",
     {"blue-harbor", "north-star", "mira-solberg", "karl-brandt"}),
]
NESTED = [
    ("Where was the father of the director of The Glass Orchard born?",
     {"glass-orchard", "tomas-reyes", "anselm-reyes"}),
    ("What is the capital of the country where the author of The Salt Ledger was born?",
     {"salt-ledger", "irene-castell", "solvania"}),
    ("Who founded the label that released Copper Sky?",
     {"copper-sky", "northgate-records"}),
    ("In which city was the author of Winter Cartography born?",
     {"winter-cartography", "piet-halvorsen"}),
]
