"""Five folders of two top folders and the words of each: the small corpora the bench
script tests write (tests/bench/test_representation_study.py, test_feedback_ceiling.py)."""

TOPICS = {
    "home/recipes": "bread flour yeast dough oven knead crust loaf soup broth",
    "home/garden": "garden soil seed compost rake weed tomato hose",
    "work/taxes": "tax return deduction receipt income refund form audit",
    "work/travel": "flight hotel booking passport luggage train ticket visa",
    "work/contracts": "contract clause signature party term agreement notice lawyer",
}
